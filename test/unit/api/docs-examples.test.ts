import { readFileSync } from 'node:fs';
import path from 'node:path';
import { buildSchema, Kind, parse, validate, type OperationDefinitionNode } from 'graphql';
import { apiModules } from '../../../src/api/graphql/schema';

/** docs/API.md shows one example request per operation; each must fit the schema. */
describe('docs/API.md examples', () => {
  const schema = buildSchema(apiModules.map((m) => m.typeDefs).join('\n'));
  const markdown = readFileSync(path.join(__dirname, '..', '..', '..', 'docs', 'API.md'), 'utf8');
  const bodies = [...markdown.matchAll(/```json\n(.*?)\n```/gs)].map((m) => JSON.parse(m[1]) as { query: string });

  it('are valid GraphQL for the management schema', () => {
    expect(bodies.length).toBeGreaterThanOrEqual(25);
    for (const { query } of bodies) {
      expect({ query, errors: validate(schema, parse(query)).map((e) => e.message) }).toEqual({ query, errors: [] });
    }
  });

  it('cover every query and mutation', () => {
    const used = new Set<string>();
    for (const { query } of bodies) {
      for (const definition of parse(query).definitions) {
        if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
        for (const selection of (definition as OperationDefinitionNode).selectionSet.selections) {
          if (selection.kind === Kind.FIELD) used.add(selection.name.value);
        }
      }
    }
    const operations = [...Object.keys(schema.getQueryType()!.getFields()), ...Object.keys(schema.getMutationType()!.getFields())];
    const documented = (name: string) =>
      used.has(name) || (name.endsWith('Meta') && used.has(name.slice(0, -4))) || used.has(`${name}Meta`);
    expect(operations.filter((name) => !documented(name))).toEqual([]);
  });
});
