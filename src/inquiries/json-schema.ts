// A minimal type-level reading of the JSON Schemas this service writes (objects of strings), so a
// schema and its TypeScript type cannot disagree.
type StringProperty = { readonly type: 'string' };

type ObjectSchema = {
  readonly type: 'object';
  readonly properties: Readonly<Record<string, StringProperty>>;
  readonly required: readonly string[];
};

export type FromSchema<S extends ObjectSchema> = {
  -readonly [K in keyof S['properties'] as K extends S['required'][number] ? K : never]: string;
} & {
  -readonly [K in keyof S['properties'] as K extends S['required'][number] ? never : K]?: string;
};
