// wcag-contrast 3 ships no types; the two functions the contrast check uses.
declare module 'wcag-contrast' {
  /** Contrast ratio (1-21) of two colours given as #rgb or #rrggbb. */
  export function hex(a: string, b: string): number;
  /** Contrast ratio of two [r, g, b] triplets (0-255). */
  export function rgb(a: [number, number, number], b: [number, number, number]): number;
}
