/**
 * The alerts configuration's shape, written once as a JSON Schema: the YAML file of `--alerts-config` and a later
 * `PUT /api/v1/alerts/config` are both checked against it by `checkAlertsConfig` (config.ts), and the API can
 * publish it as is in its OpenAPI document. What a schema cannot say (a rule naming a channel that exists, an
 * environment variable that is set, a secret that decodes) is checked in config.ts, after this.
 *
 * Every leaf has a `description` phrased as a noun ("a duration like 10m"): error messages are built from it
 * (`"10 minutes" is not a duration like 10m`), so the wording a user sees lives here beside the rule it explains.
 */
import { DURATION_PATTERN } from '../core/config-reader.js';

/** The signals an incident stands on, as rules name them in `on`. */
export const signalKinds = ['run_failed', 'assertion_failed', 'run_overdue', 'run_missing'] as const;

/** The kind of signal an incident stands on. */
export type SignalKind = (typeof signalKinds)[number];

/** Whose owners a rule tells: of the root cause, of the impacted downstream datasets and jobs, both, or none. */
export const ownerScopes = ['root', 'impacted', 'both', 'none'] as const;

/** See {@link ownerScopes}. */
export type OwnerScope = (typeof ownerScopes)[number];

/** A channel's name: letters, digits, `_`, `-` and `.`, so it can never be mistaken for an e-mail address. */
export const CHANNEL_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.-]*$';

type Schema = Readonly<Record<string, unknown>>;

/** A value that may be given alone or as a list: `on: run_failed` or `on: [run_failed, run_overdue]`. */
const oneOrMany = (item: Schema, description: string): Schema => ({
  description,
  type: ['string', 'array'],
  items: item,
  minItems: 1,
  // `items` only applies to a list; a lone string is held to the item's rule by this.
  if: { type: 'string' },
  then: item,
});

const duration: Schema = { type: 'string', pattern: DURATION_PATTERN, description: 'a duration like 10m' };
const glob: Schema = {
  type: 'string',
  minLength: 1,
  description: 'a glob such as finance.* (* is any run of characters, ? one character)',
};
const channelName: Schema = {
  type: 'string',
  pattern: CHANNEL_NAME_PATTERN,
  description: 'a channel name (letters, digits, _, - and .)',
};
const text = (description: string): Schema => ({ type: 'string', minLength: 1, description });

const webhookChannel: Schema = {
  type: 'object',
  description: 'a webhook channel',
  required: ['type', 'url', 'secret'],
  additionalProperties: false,
  properties: {
    type: { const: 'webhook' },
    url: text('the http:// or https:// URL to POST to'),
    secret: text('a Standard Webhooks signing secret: whsec_ and 24 to 64 bytes in base64'),
  },
};

const slackChannel: Schema = {
  type: 'object',
  description: 'a Slack channel',
  required: ['type', 'url'],
  additionalProperties: false,
  properties: {
    type: { const: 'slack' },
    url: text("the Slack incoming webhook's URL"),
  },
};

const emailChannel: Schema = {
  type: 'object',
  description: 'an e-mail channel',
  required: ['type', 'smtp', 'from'],
  additionalProperties: false,
  properties: {
    type: { const: 'email' },
    smtp: {
      type: 'object',
      description: 'the SMTP server to send through',
      required: ['host'],
      additionalProperties: false,
      properties: {
        host: text('the SMTP server host name'),
        port: { type: 'integer', minimum: 1, maximum: 65535, description: 'a TCP port from 1 to 65535' },
        secure: {
          type: 'boolean',
          description: 'true for TLS from the start (port 465), false for STARTTLS when offered',
        },
        user: text('the SMTP user name'),
        password: text('the SMTP password'),
      },
    },
    from: text('the sender, as ann@example.com or "Headwater <alerts@example.com>"'),
    to: oneOrMany(text('an e-mail address'), 'an e-mail address or a list of them'),
  },
};

/**
 * The JSON Schema (2020-12) of the alerts configuration, as written in YAML or sent to the API. Durations and
 * `${ENV_VAR}` references are still text here; `checkAlertsConfig` resolves them.
 */
export const alertsConfigSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: 'https://headwater.dev/schemas/alerts-config.json',
  title: 'Headwater alerts configuration',
  type: 'object',
  description: 'an alerts configuration with channels, owners and rules',
  additionalProperties: false,
  properties: {
    explorerUrl: text("the explorer's address as recipients reach it, e.g. https://lineage.example.com"),
    emailChannel: {
      ...channelName,
      description:
        "the e-mail channel that sends to owners' e-mail addresses (needed when there are several)",
    },
    channels: {
      type: 'object',
      description: 'a map of channel names to channels',
      propertyNames: channelName,
      additionalProperties: {
        type: 'object',
        description: 'a channel with a type of webhook, slack or email',
        required: ['type'],
        properties: { type: { type: 'string', description: 'the channel type: webhook, slack or email' } },
        // The discriminator picks the branch by `type`, so errors speak of that branch alone.
        discriminator: { propertyName: 'type' },
        oneOf: [webhookChannel, slackChannel, emailChannel],
      },
    },
    owners: {
      type: 'object',
      description: 'a map of owner names (as in ownership facets, e.g. team:finance) to addresses',
      propertyNames: { type: 'string', minLength: 1, description: 'an owner name' },
      additionalProperties: oneOrMany(
        text('a channel name or an e-mail address'),
        'a channel name or e-mail address, or a list of them',
      ),
    },
    rules: {
      type: 'array',
      description: 'a list of rules',
      items: {
        type: 'object',
        description: 'a rule with on, and optionally where, retryGrace, notify and throttle',
        required: ['on'],
        additionalProperties: false,
        properties: {
          name: text('a name for the rule, shown in dry runs and audit'),
          on: oneOrMany(
            { type: 'string', enum: signalKinds, description: `one of ${signalKinds.join(', ')}` },
            `a signal kind (${signalKinds.join(', ')}) or a list of them`,
          ),
          where: {
            type: 'object',
            description: 'filters on namespace, dataset and job',
            additionalProperties: false,
            properties: {
              namespace: oneOrMany(glob, 'a glob or a list of globs'),
              dataset: oneOrMany(glob, 'a glob or a list of globs'),
              job: oneOrMany(glob, 'a glob or a list of globs'),
            },
          },
          retryGrace: duration,
          notify: {
            type: 'object',
            description: 'who is told: owners, depth and channels',
            additionalProperties: false,
            properties: {
              owners: { type: 'string', enum: ownerScopes, description: `one of ${ownerScopes.join(', ')}` },
              depth: { type: 'integer', minimum: 0, description: 'a whole number of hops, 0 or more' },
              channels: oneOrMany(channelName, 'a channel name or a list of them'),
            },
          },
          throttle: duration,
        },
      },
    },
  },
} as const;
