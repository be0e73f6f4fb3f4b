/**
 * @module gateway/config/api-version
 * The `apiVersion` of the gateway's own records, apart from their schemas
 * so that every record's file can name it.
 */
export const API_VERSION = 'gateway/v1';
