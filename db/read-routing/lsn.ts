/** A WAL position (pg_lsn text, `16/B374D848`) as a number that compares. */
export function lsnValue(text: string): bigint {
  const [high, low] = text.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}
