// MJML 5 as its one-file build (mjml-browser: the same mjml-core and components, bundled; it
// loads cheerio from node_modules) ships no type declarations: the part of its API the renderer uses.
declare module 'mjml-browser' {
  export interface MjmlValidationError {
    /** The `line` of the JSON node the error is about (the renderer sets one on every node). */
    line: number | undefined;
    message: string;
    tagName: string;
    formattedMessage: string;
  }
  export interface MjmlResult {
    html: string;
    errors: MjmlValidationError[];
  }
  export interface MjmlOptions {
    validationLevel?: 'strict' | 'soft' | 'skip';
    minify?: boolean;
    beautify?: boolean;
    keepComments?: boolean;
    fonts?: Record<string, string>;
    ignoreIncludes?: boolean;
  }
  /** Takes MJML markup or its JSON form ({tagName, attributes, children | content}). */
  export default function mjml2html(input: unknown, options?: MjmlOptions): Promise<MjmlResult>;
}
