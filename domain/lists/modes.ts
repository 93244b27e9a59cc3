/** How a file goes into a list: append adds its rows; overwrite replaces every row the list had. */
export const UPLOAD_MODES = ['append', 'overwrite'] as const;
export type UploadMode = (typeof UPLOAD_MODES)[number];
