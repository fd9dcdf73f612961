import { describe, expect, it } from 'vitest';
import { parseNodeId } from './node-id.js';

describe('parseNodeId', () => {
  it.each([
    [
      'dataset:food_delivery:public.orders',
      { type: 'dataset', namespace: 'food_delivery', name: 'public.orders' },
    ],
    ['job:etl:load', { type: 'job', namespace: 'etl', name: 'load' }],
    [
      'dataset:postgres://db.example.com:5432:shop.public.orders',
      { type: 'dataset', namespace: 'postgres://db.example.com:5432', name: 'shop.public.orders' },
    ],
    ['dataset:s3://bucket:raw/orders', { type: 'dataset', namespace: 's3://bucket', name: 'raw/orders' }],
    ['dataset:bigquery:proj.ds.table', { type: 'dataset', namespace: 'bigquery', name: 'proj.ds.table' }],
    [
      'dataset:ns:name#3f5e83fa-3480-44ff-99c5-ff943904e5e8',
      { type: 'dataset', namespace: 'ns', name: 'name', version: '3f5e83fa-3480-44ff-99c5-ff943904e5e8' },
    ],
    ['datasetField:ns:orders:id', { type: 'datasetField', namespace: 'ns', name: 'orders', field: 'id' }],
    [
      'datasetField:postgres://h:5432:db.t:amount',
      { type: 'datasetField', namespace: 'postgres://h:5432', name: 'db.t', field: 'amount' },
    ],
    [
      'run:3F5E83FA-3480-44FF-99C5-FF943904E5E8',
      { type: 'run', runId: '3f5e83fa-3480-44ff-99c5-ff943904e5e8' },
    ],
  ])('parses %s', (nodeId, expected) => {
    expect(parseNodeId(nodeId)).toEqual(expected);
  });

  it.each(['', 'table:ns:x', 'dataset:', 'dataset:ns', 'dataset::name', 'run:abc', 'datasetField:ns:orders'])(
    'rejects %j with the grammar in the message',
    (nodeId) => {
      expect(() => parseNodeId(nodeId)).toThrow(/Invalid nodeId .*Use dataset:<namespace>:<name>/);
    },
  );
});
