// A sender's name that is no person's: a team, a department or a famous brand ("Google Business
// Support", "Domain Service", "InstaBoost Team"). The company field is not judged: it names a firm.

const ROLE =
  /(?<![\p{L}\p{N}])(?:team|support|service|services|center|centre|department|dept|notice|notification|promo|promotions|official|admin|administrator|billing|security|compliance|helpdesk|marketing|crypto|casino|signals|offers?|leads|traffic|outreach|listing|listings|verification|reviews|growth)(?![\p{L}\p{N}])/iu;

const BRAND =
  /(?<![\p{L}\p{N}])(?:google|facebook|meta|instagram|whatsapp|apple|icloud|microsoft|outlook|paypal|amazon|netflix|linkedin|youtube|tiktok|dhl|fedex|godaddy|shopify|wordpress)(?![\p{L}\p{N}])/iu;

export interface NameRoles {
  /** A team or department word in the name. */
  readonly role: boolean;
  /** A famous brand in the name: someone writing as that company. */
  readonly brand: boolean;
}

export function nameRoles(firstName: string, lastName: string): NameRoles {
  const name = `${firstName} ${lastName}`;
  return { role: ROLE.test(name), brand: BRAND.test(name) };
}
