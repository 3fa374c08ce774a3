/** What a credential (a bearer token or an API key) may do. */
export const PERMISSIONS = ['read', 'write', 'force', 'export', 'admin'] as const;
export type Permission = (typeof PERMISSIONS)[number];
