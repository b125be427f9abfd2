import {
  getNamedType,
  getNullableType,
  GraphQLError,
  isAbstractType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isListType,
  isObjectType,
  Kind,
  SchemaMetaFieldDef,
  TypeMetaFieldDef,
  type ArgumentNode,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationRule,
} from 'graphql';

/**
 * Bounds on the work one GraphQL document may ask for, checked on the document (and the request's
 * variables) before any resolver runs. Mercurius' own `queryDepth` does not follow named fragment
 * spreads and nothing bounded aliases or list sizes, so one request could ask for millions of
 * records (issue 10); these rules measure the operation with its fragments expanded.
 *
 * - depth: the longest chain of nested fields (the leaf counts; `{ a { b } }` is 2). `__Type.ofType`
 *   does not count: it only unwraps list and non-null wrappers (a chain as long as the schema's deepest
 *   wrapping, no work), and the standard introspection query that clients send nests it 7 times;
 * - fields: how many fields the expanded operation selects (aliases and fragment uses included);
 * - cost: the work of the answer, documents read and values produced. Every field costs 1, and a list
 *   field of documents (read by a query of its own: `allAccounts`, `linked_accounts`, `rejects`)
 *   multiplies the cost of what it selects by its size: its `perPage`/`first`/`last`/`limit` argument,
 *   else DEFAULT_LIST_SIZE. A list marked `@embedded` in the schema holds values its parent already has
 *   (an array of the stored document, such as `running_transactions` or `previous_versions`, or of a
 *   computed object): it reads nothing more, and its selection counts once, as a scalar list (`tags`)
 *   counts one field whatever its length; its bytes are the parent document's, bounded by the data, not
 *   by the request. Introspection lists count their average size in the schema (types, fields per type,
 *   arguments per field, ...), so the cost of an introspection query is about the size of its answer:
 *   the standard query stays well under the budget, deep `fields { type { fields ... } }` nesting does not.
 */
export interface QueryLimits {
  maxDepth: number;
  maxFields: number;
  maxCost: number;
}

/** Size assumed for a list of documents whose size the request does not state (the API's default page size). */
export const DEFAULT_LIST_SIZE = 25;

/** Name of the schema directive that marks a list field as embedded (see EMBEDDED_DIRECTIVE_TYPEDEFS). */
export const EMBEDDED_DIRECTIVE = 'embedded';

/** Name of the schema directive that gives a scanning field its cost (see EMBEDDED_DIRECTIVE_TYPEDEFS). */
export const SCAN_DIRECTIVE = 'scan';

/**
 * The directive's definition, for a schema whose fields use it. It only informs the cost measured here;
 * it changes nothing in execution, and introspection does not show where it is used.
 */
export const EMBEDDED_DIRECTIVE_TYPEDEFS = /* GraphQL */ `
  "A list whose elements the parent already holds (an array of its stored document, or of a computed object): no read of its own, so the query cost counts its selection once, not once per element (GRAPHQL_MAX_COST)."
  directive @${EMBEDDED_DIRECTIVE} on FIELD_DEFINITION
  "A field whose answer is a scan of stored records (a rerating's dry run), not one read: the query cost counts it as this much (GRAPHQL_MAX_COST)."
  directive @${SCAN_DIRECTIVE}(cost: Int!) on FIELD_DEFINITION
`;

/**
 * Nesting of selection sets, fragment spreads included, at which measuring stops: it keeps the walk's
 * recursion (and so the stack) bounded whatever the document, e.g. a chain of thousands of fragments.
 */
export const MAX_NESTING = 200;

const SIZE_ARGUMENTS = new Set(['perPage', 'first', 'last', 'limit']);

export interface Measure {
  depth: number;
  fields: number;
  cost: number;
}

/** What the request adds to its document: which operation runs, and the values of its variables. */
export interface RequestParams {
  operationName?: string | null;
  variables?: Record<string, unknown> | null;
}

class TooDeep extends Error {}

const NOTHING: Measure = { depth: 0, fields: 0, cost: 0 };

/** Measures of each operation to run (the named one, or every one when none is chosen or it is unknown). */
export function measureOperations(
  schema: GraphQLSchema,
  document: DocumentNode,
  request: RequestParams = {},
): Array<{ name: string; measure: Measure | null }> {
  const fragments = new Map<string, FragmentDefinitionNode>();
  const operations: OperationDefinitionNode[] = [];
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
    else if (definition.kind === Kind.OPERATION_DEFINITION) operations.push(definition);
  }
  const chosen = request.operationName ? operations.filter((o) => o.name?.value === request.operationName) : [];
  const measured = chosen.length > 0 ? chosen : operations;
  return measured.map((operation) => ({
    name: operation.name?.value ?? 'anonymous',
    measure: measureOperation(schema, operation, fragments, request.variables ?? {}),
  }));
}

/** null when the selections nest deeper than MAX_NESTING. */
function measureOperation(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  fragments: Map<string, FragmentDefinitionNode>,
  variables: Record<string, unknown>,
): Measure | null {
  // A fragment measures the same wherever it is spread: computed once, so fragments spread many
  // times (even exponentially) cost linear time. `null` marks one being measured (a cycle, which
  // NoFragmentCyclesRule refuses; counted as nothing here).
  const memo = new Map<string, Measure | null>();
  const defaults = new Map<string, unknown>();
  for (const definition of operation.variableDefinitions ?? []) {
    const value = definition.defaultValue;
    if (value?.kind === Kind.INT) defaults.set(definition.variable.name.value, Number(value.value));
  }

  const listSize = (args: readonly ArgumentNode[] | undefined): number => {
    for (const arg of args ?? []) {
      if (!SIZE_ARGUMENTS.has(arg.name.value)) continue;
      const value = arg.value;
      let size: unknown;
      if (value.kind === Kind.INT) size = Number(value.value);
      else if (value.kind === Kind.VARIABLE) size = variables[value.name.value] ?? defaults.get(value.name.value);
      // A size the resolver will refuse (negative, not a number) still costs the default.
      if (typeof size === 'number' && Number.isFinite(size) && size >= 0) return size;
    }
    return DEFAULT_LIST_SIZE;
  };

  // The definition of a field; __schema and __type are meta fields the root type does not list.
  const fieldOf = (parent: GraphQLNamedType | undefined, node: FieldNode): GraphQLField<unknown, unknown> | undefined => {
    if (node.name.value === SchemaMetaFieldDef.name) return SchemaMetaFieldDef;
    if (node.name.value === TypeMetaFieldDef.name) return TypeMetaFieldDef;
    return parent && (isObjectType(parent) || isInterfaceType(parent)) ? parent.getFields()[node.name.value] : undefined;
  };

  const sizes = introspectionSizes(schema);

  // How many times a list field's selection counts: introspection lists their average size, embedded
  // lists once (their values come with the parent), lists of documents the size the request asks for.
  const sizeOf = (parent: GraphQLNamedType | undefined, field: GraphQLField<unknown, unknown>, node: FieldNode): number =>
    sizes.get(`${parent?.name}.${node.name.value}`) ?? (isEmbedded(field) ? 1 : listSize(node.arguments));

  const walk = (set: SelectionSetNode, parent: GraphQLNamedType | undefined, nesting: number): Measure => {
    if (nesting > MAX_NESTING) throw new TooDeep();
    let depth = 0;
    let fields = 0;
    let cost = 0;
    for (const selection of set.selections) {
      let m: Measure;
      if (selection.kind === Kind.FIELD) {
        const field = fieldOf(parent, selection);
        const type = field?.type;
        const inner = selection.selectionSet ? walk(selection.selectionSet, type && getNamedType(type), nesting + 1) : NOTHING;
        const size = field && isListType(getNullableType(field.type)) ? sizeOf(parent, field, selection) : 1;
        m = {
          depth: parent?.name === '__Type' && selection.name.value === 'ofType' ? inner.depth : inner.depth + 1,
          fields: inner.fields + 1,
          cost: (field ? ownCost(field) : 1) + size * inner.cost,
        };
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const type = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : parent;
        m = walk(selection.selectionSet, type ?? undefined, nesting + 1);
      } else {
        m = spread(selection.name.value, nesting + 1);
      }
      depth = Math.max(depth, m.depth);
      fields += m.fields;
      cost += m.cost;
    }
    return { depth, fields, cost };
  };

  const spread = (name: string, nesting: number): Measure => {
    if (memo.has(name)) return memo.get(name) ?? NOTHING;
    const fragment = fragments.get(name);
    if (!fragment) return NOTHING;
    memo.set(name, null);
    const m = walk(fragment.selectionSet, schema.getType(fragment.typeCondition.name.value) ?? undefined, nesting);
    memo.set(name, m);
    return m;
  };

  const root =
    operation.operation === 'query'
      ? schema.getQueryType()
      : operation.operation === 'mutation'
        ? schema.getMutationType()
        : schema.getSubscriptionType();
  try {
    return walk(operation.selectionSet, root ?? undefined, 0);
  } catch (err) {
    if (err instanceof TooDeep) return null;
    throw err;
  }
}

/** Whether a field's definition carries @embedded (schemas built from SDL keep it in the field's AST node). */
function isEmbedded(field: GraphQLField<unknown, unknown>): boolean {
  return field.astNode?.directives?.some((d) => d.name.value === EMBEDDED_DIRECTIVE) ?? false;
}

/** A field's own cost: 1, or its @scan cost. */
function ownCost(field: GraphQLField<unknown, unknown>): number {
  const scan = field.astNode?.directives?.find((d) => d.name.value === SCAN_DIRECTIVE);
  const value = scan?.arguments?.find((a) => a.name.value === 'cost')?.value;
  return value?.kind === Kind.INT ? Number(value.value) : 1;
}

const introspectionSizeCache = new WeakMap<GraphQLSchema, Map<string, number>>();

/** Average sizes of the introspection lists of `schema`, by `Type.field` (computed once per schema). */
function introspectionSizes(schema: GraphQLSchema): Map<string, number> {
  let sizes = introspectionSizeCache.get(schema);
  if (sizes) return sizes;
  const types = Object.values(schema.getTypeMap());
  const directives = schema.getDirectives();
  let fields = 0;
  let args = 0;
  let interfaces = 0;
  let possible = 0;
  let enumValues = 0;
  let inputFields = 0;
  for (const type of types) {
    if (isObjectType(type) || isInterfaceType(type)) {
      const list = Object.values(type.getFields());
      fields += list.length;
      args += list.reduce((n, f) => n + f.args.length, 0);
      interfaces += type.getInterfaces().length;
    }
    if (isAbstractType(type)) possible += schema.getPossibleTypes(type).length;
    if (isEnumType(type)) enumValues += type.getValues().length;
    if (isInputObjectType(type)) inputFields += Object.keys(type.getFields()).length;
  }
  // `__Type.fields` and the like are asked of every type listed, so their average is over all types.
  const perType = (n: number) => Math.max(1, Math.ceil(n / types.length));
  sizes = new Map([
    ['__Schema.types', types.length],
    ['__Schema.directives', directives.length],
    ['__Type.fields', perType(fields)],
    ['__Type.interfaces', perType(interfaces)],
    ['__Type.possibleTypes', perType(possible)],
    ['__Type.enumValues', perType(enumValues)],
    ['__Type.inputFields', perType(inputFields)],
    ['__Field.args', Math.max(1, Math.ceil(args / Math.max(1, fields)))],
    ['__Directive.args', Math.max(1, Math.ceil(directives.reduce((n, d) => n + d.args.length, 0) / Math.max(1, directives.length)))],
  ]);
  introspectionSizeCache.set(schema, sizes);
  return sizes;
}

/** The errors of a document over `limits`, each naming the limit (and its setting) it exceeds. */
export function limitErrors(
  schema: GraphQLSchema,
  document: DocumentNode,
  limits: QueryLimits,
  request: RequestParams = {},
): GraphQLError[] {
  const errors: GraphQLError[] = [];
  for (const { name, measure } of measureOperations(schema, document, request)) {
    const what = `Operation ${name}`;
    if (measure === null) {
      errors.push(
        new GraphQLError(
          `${what} nests selections and fragments more than ${MAX_NESTING} deep, which exceeds the query depth limit of ${limits.maxDepth} (GRAPHQL_MAX_DEPTH)`,
        ),
      );
      continue;
    }
    if (measure.depth > limits.maxDepth) {
      errors.push(
        new GraphQLError(
          `${what} has depth ${measure.depth}, which exceeds the query depth limit of ${limits.maxDepth} (GRAPHQL_MAX_DEPTH)`,
        ),
      );
    }
    if (measure.fields > limits.maxFields) {
      errors.push(
        new GraphQLError(
          `${what} selects ${measure.fields} fields, which exceeds the limit of ${limits.maxFields} fields per document (GRAPHQL_MAX_FIELDS)`,
        ),
      );
    }
    if (measure.cost > limits.maxCost) {
      // Exponential documents reach costs a double cannot hold as an integer.
      const cost = measure.cost > Number.MAX_SAFE_INTEGER ? `more than ${Number.MAX_SAFE_INTEGER}` : String(measure.cost);
      errors.push(
        new GraphQLError(
          `${what} has an estimated cost of ${cost}, which exceeds the query cost limit of ${limits.maxCost} (GRAPHQL_MAX_COST)`,
        ),
      );
    }
  }
  return errors;
}

/**
 * The limits as a graphql-js validation rule: `validate(schema, document, [queryLimitsRule(limits, request)])`.
 * With the request's variables, list sizes given as variables are known; without, they count as
 * their default value or DEFAULT_LIST_SIZE.
 */
export function queryLimitsRule(limits: QueryLimits, request: RequestParams = {}): ValidationRule {
  return (context) => ({
    Document(document) {
      for (const error of limitErrors(context.getSchema(), document, limits, request)) context.reportError(error);
      return false;
    },
  });
}
