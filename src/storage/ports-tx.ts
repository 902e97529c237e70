// The opaque transaction of the storage ports (ports.ts re-exports it): apart, so that every port
// file can take it without importing another.

/** An open transaction, passed back into store methods. */
export type Tx = { readonly __brand: 'Tx' };
