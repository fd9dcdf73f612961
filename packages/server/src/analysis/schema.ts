/** Schema comparison of two dataset versions. Pure. */
import { Closed, Nullable, Type, type Static } from '../core/json-schema.js';

/** A column of a schema: its name (nested fields as `parent.child`) and type, null when the facet gave none. */
export const SchemaColumnSchema = Closed({ name: Type.String(), type: Nullable(Type.String()) });
export type SchemaColumn = Static<typeof SchemaColumnSchema>;

/** A column whose type changed. */
export const TypeChangeSchema = Closed({
  name: Type.String(),
  fromType: Nullable(Type.String()),
  toType: Nullable(Type.String()),
});
export type TypeChange = Static<typeof TypeChangeSchema>;

/** The properties of a {@link SchemaChange}, for the answers that extend it. */
export const schemaChangeProperties = {
  added: Type.Array(SchemaColumnSchema),
  removed: Type.Array(SchemaColumnSchema),
  typeChanged: Type.Array(TypeChangeSchema),
  breaking: Type.Boolean({ description: 'A column was removed or changed type' }),
};

/** What changed between two schemas. Removals and type changes are breaking: readers of the column fail. */
export const SchemaChangeSchema = Closed(schemaChangeProperties);
export type SchemaChange = Static<typeof SchemaChangeSchema>;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The columns of a schema facet's `fields`, nested fields flattened to `parent.child`, in schema order.
 * Entries without a string name are skipped.
 */
export function schemaColumns(fields: readonly unknown[] | null | undefined, prefix = ''): SchemaColumn[] {
  const columns: SchemaColumn[] = [];
  for (const field of fields ?? []) {
    if (!isObject(field) || typeof field.name !== 'string') continue;
    const name = `${prefix}${field.name}`;
    columns.push({ name, type: typeof field.type === 'string' ? field.type : null });
    if (Array.isArray(field.fields)) columns.push(...schemaColumns(field.fields, `${name}.`));
  }
  return columns;
}

/**
 * Compares two schemas (schema facet `fields`). Added and removed columns come in schema order, type changes
 * in the new schema's order. A type appearing where none was given is not a change.
 *
 * @example
 * diffSchemas([{ name: 'id', type: 'int' }], [{ name: 'id', type: 'bigint' }]).breaking; // true
 */
export function diffSchemas(
  from: readonly unknown[] | null | undefined,
  to: readonly unknown[] | null | undefined,
): SchemaChange {
  const before = new Map(schemaColumns(from).map((column) => [column.name, column]));
  const after = new Map(schemaColumns(to).map((column) => [column.name, column]));
  const added = [...after.values()].filter((column) => !before.has(column.name));
  const removed = [...before.values()].filter((column) => !after.has(column.name));
  const typeChanged: TypeChange[] = [];
  for (const column of after.values()) {
    const old = before.get(column.name);
    if (old && old.type !== null && column.type !== null && old.type !== column.type) {
      typeChanged.push({ name: column.name, fromType: old.type, toType: column.type });
    }
  }
  return { added, removed, typeChanged, breaking: removed.length > 0 || typeChanged.length > 0 };
}

/** True when nothing changed. */
export const isEmptyChange = (change: SchemaChange): boolean =>
  change.added.length === 0 && change.removed.length === 0 && change.typeChanged.length === 0;

/** The columns a breaking change breaks: the removed ones and those whose type changed. */
export const brokenColumns = (change: SchemaChange): string[] => [
  ...change.removed.map((column) => column.name),
  ...change.typeChanged.map((column) => column.name),
];
