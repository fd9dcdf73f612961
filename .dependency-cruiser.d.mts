// The types of .dependency-cruiser.mjs, for the test that reads its rules.
import type { IConfiguration } from 'dependency-cruiser';

export declare const SERVER_LAYERS: string[];
declare const configuration: IConfiguration & {
  forbidden: NonNullable<IConfiguration['forbidden']>;
  options: NonNullable<IConfiguration['options']>;
};
export default configuration;
