/**
 * A CSV header's problems against the columns a file kind knows (missing required columns, unknown or
 * repeated ones); empty when usable. CDR imports and rate decks both refuse a whole file on these,
 * before any line is read.
 */
export function csvHeaderProblems(columns: readonly string[], required: readonly string[], optional: readonly string[]): string[] {
  const known = new Set<string>([...required, ...optional]);
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const c of columns) {
    if (!known.has(c)) problems.push(`unknown column "${c}" (known: ${[...known].join(', ')})`);
    if (seen.has(c)) problems.push(`column "${c}" appears twice`);
    seen.add(c);
  }
  for (const c of required) if (!seen.has(c)) problems.push(`missing required column "${c}"`);
  return problems;
}
