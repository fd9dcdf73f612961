import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  abfssDataset,
  bigqueryDataset,
  databaseDataset,
  datasetFromUri,
  fileDataset,
  gcsDataset,
  hdfsDataset,
  kafkaDataset,
  mysqlDataset,
  partitionRoot,
  partitionedInputDataset,
  partitionedOutputDataset,
  postgresDataset,
  redshiftDataset,
  s3Dataset,
  snowflakeDataset,
} from './naming.js';
import { officialErrors } from './test-support/official-schemas.js';

describe('naming helpers', () => {
  it('follow the naming table, with default ports and case rules per platform', () => {
    expect(
      postgresDataset({ host: 'DB.example.com', database: 'Shop', schema: 'Public', table: 'Orders' }),
    ).toEqual({
      namespace: 'postgres://db.example.com:5432',
      name: 'shop.public.orders',
    });
    expect(
      postgresDataset({ host: 'db', port: 6543, database: 'S', schema: 'P', table: 'T', preserveCase: true }),
    ).toEqual({
      namespace: 'postgres://db:6543',
      name: 'S.P.T',
    });
    expect(mysqlDataset({ host: 'mysql', database: 'Shop', table: 'Orders' })).toEqual({
      namespace: 'mysql://mysql:3306',
      name: 'Shop.Orders',
    });
    expect(
      redshiftDataset({
        cluster: 'analytics',
        region: 'eu-west-1',
        database: 'DW',
        schema: 'Sales',
        table: 'Orders',
      }),
    ).toEqual({
      namespace: 'redshift://analytics.eu-west-1:5439',
      name: 'dw.sales.orders',
    });
    expect(
      snowflakeDataset({
        account: 'MyOrg-Acct1.snowflakecomputing.com',
        database: 'db',
        schema: 'raw',
        table: 'orders',
      }),
    ).toEqual({
      namespace: 'snowflake://myorg-acct1',
      name: 'DB.RAW.ORDERS',
    });
    expect(bigqueryDataset({ project: 'my-project', dataset: 'Sales', table: 'orders' })).toEqual({
      namespace: 'bigquery',
      name: 'my-project.Sales.orders',
    });
    expect(kafkaDataset({ bootstrapServers: 'Broker1:9093,broker2:9093', topic: 'orders' })).toEqual({
      namespace: 'kafka://broker1:9093',
      name: 'orders',
    });
    expect(kafkaDataset({ bootstrapServers: 'broker', topic: 't' }).namespace).toBe('kafka://broker:9092');
    expect(
      databaseDataset({
        scheme: 'mssql',
        host: 'sql',
        database: 'x',
        nameParts: ['db', 'dbo', 'T'],
      } as never),
    ).toEqual({
      namespace: 'mssql://sql:1433',
      name: 'db.dbo.T',
    });
    expect(s3Dataset({ bucket: 'Lake', key: '/orders/2024/' })).toEqual({
      namespace: 's3://lake',
      name: 'orders/2024',
    });
    expect(gcsDataset({ bucket: 'b', key: 'a/b/' })).toEqual({ namespace: 'gs://b', name: 'a/b' });
    expect(abfssDataset({ container: 'raw', account: 'acct', path: '/x/y/' })).toEqual({
      namespace: 'abfss://raw@acct.dfs.core.windows.net',
      name: 'x/y',
    });
    expect(hdfsDataset({ host: 'NameNode', path: 'warehouse/orders/' })).toEqual({
      namespace: 'hdfs://namenode:8020',
      name: '/warehouse/orders',
    });
    expect(fileDataset({ path: '/tmp/out/' })).toEqual({ namespace: 'file', name: '/tmp/out' });
    expect(fileDataset({ path: '/tmp/out', host: 'Worker1' }).namespace).toBe('file://worker1');
  });

  it('reject empty parts and bad ports with a message naming them', () => {
    expect(() => postgresDataset({ host: 'db', database: '', schema: 's', table: 't' })).toThrow(
      /database must not be empty/,
    );
    expect(() => mysqlDataset({ host: 'db', port: 70000, database: 'd', table: 't' })).toThrow(
      /port must be an integer/,
    );
  });

  it('parse storage and connection URIs', () => {
    expect(datasetFromUri('s3a://Lake/orders/date=2024-01-15/')).toEqual({
      namespace: 's3://lake',
      name: 'orders/date=2024-01-15',
    });
    expect(datasetFromUri('gs://bucket/path/file.csv')).toEqual({
      namespace: 'gs://bucket',
      name: 'path/file.csv',
    });
    expect(datasetFromUri('abfss://raw@acct.dfs.core.windows.net/x/')).toEqual({
      namespace: 'abfss://raw@acct.dfs.core.windows.net',
      name: 'x',
    });
    expect(datasetFromUri('hdfs://nn:9000/warehouse/t/')).toEqual({
      namespace: 'hdfs://nn:9000',
      name: '/warehouse/t',
    });
    expect(datasetFromUri('file:///tmp/data.csv')).toEqual({ namespace: 'file', name: '/tmp/data.csv' });
    expect(datasetFromUri('/tmp/data.csv')).toEqual({ namespace: 'file', name: '/tmp/data.csv' });
    expect(datasetFromUri('postgresql://ana:secret@DB:5432/shop')).toEqual({
      namespace: 'postgres://db:5432',
      name: 'shop',
    });
    expect(datasetFromUri('mysql+pymysql://u@mysql/shop')).toEqual({
      namespace: 'mysql://mysql:3306',
      name: 'shop',
    });
    expect(() => datasetFromUri('orders.csv')).toThrow(/not a URI/);
  });

  it('normalise idempotently: parsing a helper result gives the same id', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[a-z0-9][a-z0-9-]{1,20}$/),
        fc.array(fc.stringMatching(/^[A-Za-z0-9_=.-]{1,10}$/), { minLength: 1, maxLength: 5 }),
        fc.boolean(),
        (bucket, segments, trailing) => {
          const id = s3Dataset({ bucket, key: segments.join('/') + (trailing ? '/' : '') });
          expect(datasetFromUri(`${id.namespace}/${id.name}`)).toEqual(id);
          expect(id.name.endsWith('/')).toBe(false);
        },
      ),
    );
  });
});

describe('partitions', () => {
  it('keeps orders/date=2024-01-15 as dataset orders with the partition in a facet', () => {
    expect(partitionRoot('orders/date=2024-01-15/region=eu/part-0001.parquet')).toEqual({
      root: 'orders',
      partitions: { date: '2024-01-15', region: 'eu' },
      identifier: 'date=2024-01-15/region=eu',
    });
    expect(partitionRoot('/warehouse/orders')).toEqual({
      root: '/warehouse/orders',
      partitions: {},
      identifier: '',
    });
    const input = partitionedInputDataset(datasetFromUri('s3://lake/orders/date=2024-01-15/'));
    expect(input.namespace).toBe('s3://lake');
    expect(input.name).toBe('orders');
    expect(input.inputFacets!.subset!.inputCondition).toEqual({
      type: 'partition',
      partitions: [{ identifier: 'date=2024-01-15', dimensions: { date: '2024-01-15' } }],
    });
    const subset = input.inputFacets!.subset!;
    expect(officialErrors(subset._schemaURL, subset)).toEqual([]);
    const output = partitionedOutputDataset({ namespace: 's3://lake', name: 'orders/date=2024-01-15' });
    expect(output.outputFacets!.subset!.outputCondition).toMatchObject({ type: 'partition' });
    expect(officialErrors(output.outputFacets!.subset!._schemaURL, output.outputFacets!.subset)).toEqual([]);
    expect(partitionedInputDataset({ namespace: 'file', name: '/tmp/x' })).toEqual({
      namespace: 'file',
      name: '/tmp/x',
    });
  });
});
