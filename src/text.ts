/** Small wording helpers shared by messages and reports. */

/** `1 trial`, `5 trials`, `2 strategies` (with `many` given). */
export const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;
