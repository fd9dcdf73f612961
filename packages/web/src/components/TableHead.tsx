/** A table's header row from its column names. */
export function TableHead({ columns }: { columns: readonly string[] }) {
  return (
    <thead>
      <tr>
        {columns.map((name) => (
          <th key={name}>{name}</th>
        ))}
      </tr>
    </thead>
  );
}
