import fc, {type Arbitrary} from 'fast-check';

/**
 * Any JSON value, small: null, booleans, integers, doubles, strings from
 * `text`, arrays and objects with keys from `key`. With `canonical`, only
 * numbers canonical JSON accepts (integral doubles beyond 2^53-1 are refused
 * by design, and tested apart).
 */
export function jsonValues(options: {
  text: Arbitrary<string>;
  key?: Arbitrary<string>;
  maxKeys?: number;
  canonical: boolean;
}): Arbitrary<unknown> {
  const {text, key = text, maxKeys = 4, canonical} = options;
  return fc.letrec((tie) => ({
    value: fc.oneof(
      {depthSize: 'small'},
      fc.constant(null),
      fc.boolean(),
      canonical ? fc.integer({min: -(2 ** 53) + 1, max: 2 ** 53 - 1}) : fc.integer(),
      canonical
        ? fc
            .double({noNaN: true, noDefaultInfinity: true})
            .filter((x) => !Number.isInteger(x) || Number.isSafeInteger(x))
        : fc.double({noNaN: true, noDefaultInfinity: true}),
      text,
      fc.array(tie('value'), {maxLength: 4}),
      fc.dictionary(key, tie('value'), {maxKeys}),
    ),
  })).value;
}
