import { execFile } from 'node:child_process';
import { cp, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Toolchain } from './toolchain.js';

const run = promisify(execFile);
const producers = path.join(path.dirname(fileURLToPath(import.meta.url)), 'producers');

/** What the producers' datasets are named after: the Spark work folder and dbt's PostgreSQL database. */
export interface ScenarioNames {
  readonly work: string;
  readonly database: string;
}

/** The job namespaces of the scenario, one per producer and mode; the fixtures are split along them. */
export const NAMESPACES = {
  spark: 'interop_spark',
  python: 'interop_python',
  pythonGzip: 'interop_python_gzip',
  dbtArtifacts: 'interop_dbt',
  dbtLogs: 'interop_dbt_logs',
} as const;

/** Where dbt-postgres and the Python loader name PostgreSQL datasets. */
export const POSTGRES_NAMESPACE = 'postgres://127.0.0.1:5432';

/** The recorded fixtures, in the order the scenario emits them, and the job namespaces each holds. */
export const FIXTURES = [
  { file: 'spark.ndjson', namespaces: [NAMESPACES.spark] },
  { file: 'python-client.ndjson', namespaces: [NAMESPACES.python, NAMESPACES.pythonGzip] },
  { file: 'dbt-artifacts.ndjson', namespaces: [NAMESPACES.dbtArtifacts] },
  { file: 'dbt-structured-logs.ndjson', namespaces: [NAMESPACES.dbtLogs] },
] as const;

/** One producer step: its command line and the exit code it must end with (dbt's failing test makes it 1). */
interface Step {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd?: string;
  readonly env?: Record<string, string>;
  readonly expectedExit: number;
}

async function runStep(step: Step, baseEnv: NodeJS.ProcessEnv): Promise<number> {
  const started = Date.now();
  let code = 0;
  let output: string;
  try {
    const result = await run(step.command, step.args, {
      cwd: step.cwd,
      env: { ...baseEnv, ...step.env },
      maxBuffer: 64 * 1024 * 1024,
      timeout: 300_000,
    });
    output = result.stdout + result.stderr;
  } catch (error) {
    const failure = error as { code?: number | string; stdout?: string; stderr?: string };
    code = typeof failure.code === 'number' ? failure.code : -1;
    output = `${failure.stdout ?? ''}${failure.stderr ?? ''}${code === -1 ? String(error) : ''}`;
  }
  if (code !== step.expectedExit)
    throw new Error(
      `${step.name} exited with ${code}, expected ${step.expectedExit}:\n${output.slice(-6000)}`,
    );
  return Date.now() - started;
}

/**
 * Drives every producer against the server at `url`, in an order that connects them: Spark writes the parquet
 * files, the Python client loads the customers into the PostgreSQL table dbt reads as a source, and dbt-ol builds
 * seeds, staging and a mart with passing and failing tests (`build` in artifact mode, then in structured-logs
 * mode). The dbt
 * project is copied to `names.work`, since dbt writes its target folder beside it. Returns each step's time.
 */
export async function runProducers(
  tool: Toolchain,
  url: string,
  names: ScenarioNames,
): Promise<Record<string, number>> {
  const dbtDir = path.join(names.work, 'dbt');
  await mkdir(names.work, { recursive: true });
  await cp(path.join(producers, 'dbt_project'), dbtDir, { recursive: true });
  const admin = new URL(tool.adminUrl);
  const dsn = new URL(tool.adminUrl);
  dsn.pathname = `/${names.database}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${tool.bin}:${process.env.PATH ?? ''}`,
    // Loopback only: Spark binds its driver there; dbt and the client send no telemetry.
    SPARK_LOCAL_IP: '127.0.0.1',
    PYSPARK_PYTHON: tool.python,
    DBT_SEND_ANONYMOUS_USAGE_STATS: 'false',
    DO_NOT_TRACK: '1',
    OPENLINEAGE_URL: url,
    DBT_PROFILES_DIR: dbtDir,
    DBT_HOST: admin.hostname,
    DBT_PORT: admin.port || '5432',
    DBT_USER: decodeURIComponent(admin.username),
    DBT_PASSWORD: decodeURIComponent(admin.password),
    DBT_DATABASE: names.database,
  };
  delete env.OPENLINEAGE_CONFIG;
  delete env.OPENLINEAGE_DISABLED;
  const python = (script: string, ...args: string[]): Pick<Step, 'command' | 'args'> => ({
    command: tool.python,
    args: [path.join(producers, script), ...args],
  });
  const customers = path.join(names.work, 'lake', 'customers');
  const dbt = (namespace: string, args: string[], expectedExit: number): Step => ({
    name: `dbt-ol ${args.join(' ')}`,
    command: path.join(tool.bin, 'dbt-ol'),
    args,
    cwd: dbtDir,
    env: { OPENLINEAGE_NAMESPACE: namespace },
    expectedExit,
  });
  const steps: Step[] = [
    {
      name: 'spark',
      ...python('spark_job.py', url, tool.sparkListenerJar, names.work, NAMESPACES.spark),
      cwd: names.work,
      expectedExit: 0,
    },
    {
      name: 'python client (http)',
      ...python(
        'python_client.py',
        url,
        'none',
        NAMESPACES.python,
        customers,
        dsn.toString(),
        names.database,
      ),
      expectedExit: 0,
    },
    {
      name: 'python client (http, gzip)',
      ...python(
        'python_client.py',
        url,
        'gzip',
        NAMESPACES.pythonGzip,
        customers,
        dsn.toString(),
        names.database,
      ),
      expectedExit: 0,
    },
    // One `build` (seeds, models, tests) per mode: each dbt start costs seconds, and CI's budget is small.
    dbt(NAMESPACES.dbtArtifacts, ['build'], 1),
    dbt(NAMESPACES.dbtLogs, ['build', '--consume-structured-logs'], 1),
  ];
  const times: Record<string, number> = {};
  for (const step of steps) times[step.name] = await runStep(step, env);
  return times;
}
