import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import marquez.client.MarquezClient;
import marquez.client.MarquezHttpException;
import marquez.client.models.DatasetId;
import marquez.client.models.DbTableMeta;
import marquez.client.models.Field;
import marquez.client.models.JobId;
import marquez.client.models.JobMeta;
import marquez.client.models.JobType;
import marquez.client.models.NamespaceMeta;
import marquez.client.models.NodeId;
import marquez.client.models.RunMeta;
import marquez.client.models.RunState;
import marquez.client.models.SearchFilter;
import marquez.client.models.SearchSort;
import marquez.client.models.SourceMeta;

/**
 * Calls every public method of Marquez's Java client (marquez-java) against a server, in an order where each call
 * has what it needs, and prints one JSON line per call: {"call", "pass", "status", "error"}. A call passes when
 * the client returns without throwing and the answer says what was asked (the name, the state).
 *
 * <p>Usage: java -cp CLIENT_CLASSPATH JavaCalls.java URL SUFFIX
 */
public final class JavaCalls {
  private static final Map<String, String> values = new HashMap<>();

  public static void main(String[] args) {
    final MarquezClient client = MarquezClient.builder().baseUrl(args[0]).build();
    final String suffix = args[1];
    final String ns = "marquez-java-" + suffix;
    final String source = "warehouse-java-" + suffix;
    final String tag = ("JAVATAG_" + suffix).toUpperCase().replace('-', '_');
    final String job = "daily_totals";
    final String input = "public.orders";
    final String output = "public.totals";
    final Instant t0 = Instant.now().truncatedTo(ChronoUnit.SECONDS);

    record("createNamespace", () -> client.createNamespace(ns, new NamespaceMeta("owner", "Java client calls")).getName().equals(ns));
    record("getNamespace", () -> client.getNamespace(ns).getName().equals(ns));
    record("listNamespaces", () -> client.listNamespaces(1000, 0).stream().anyMatch(n -> n.getName().equals(ns)));
    record("createSource", () -> client.createSource(source, SourceMeta.builder().type("POSTGRESQL")
        .connectionUrl("jdbc:postgresql://localhost:5432/shop").description("the shop").build()).getName().equals(source));
    record("getSource", () -> client.getSource(source).getName().equals(source));
    record("listSources", () -> client.listSources(1000, 0).stream().anyMatch(s -> s.getName().equals(source)));
    record("createDataset", () -> client.createDataset(ns, input, DbTableMeta.builder().physicalName(input)
        .sourceName(source).description("one row per order")
        .fields(List.of(new Field("id", "INTEGER", Set.of(), "the key"), new Field("total", "DECIMAL", Set.of(), null)))
        .build()).getName().equals(input));
    record("createDataset(output)", () -> client.createDataset(ns, output, DbTableMeta.builder().physicalName(output)
        .sourceName(source).fields(List.of(new Field("day", "DATE", Set.of(), null))).build()).getName().equals(output));
    record("getDataset", () -> {
      var dataset = client.getDataset(ns, input);
      dataset.getCurrentVersion().ifPresent(version -> values.put("datasetVersion", version.toString()));
      return dataset.getFields().stream().map(Field::getName).toList().equals(List.of("id", "total"));
    });
    record("listDatasets", () -> client.listDatasets(ns).size() == 2);
    record("listDatasetVersions", () -> !client.listDatasetVersions(ns, input).isEmpty());
    record("getDatasetVersion", () -> client.getDatasetVersion(ns, input, values.get("datasetVersion")).getName().equals(input));
    record("createTag", () -> client.createTag(tag, "a tag").getName().equals(tag));
    record("createTag(name)", () -> client.createTag(tag + "_2").getName().equals(tag + "_2"));
    record("listTags", () -> client.listTags(1000, 0).stream().anyMatch(t -> t.getName().equals(tag)));
    record("tagDatasetWith", () -> client.tagDatasetWith(ns, input, tag).getTags().contains(tag));
    record("tagFieldWith", () -> client.tagFieldWith(ns, input, "id", tag).getFields().stream()
        .anyMatch(f -> f.getName().equals("id") && f.getTags().contains(tag)));
    record("deleteDatasetFieldTag", () -> client.deleteDatasetFieldTag(ns, input, "id", tag).getFields().stream()
        .noneMatch(f -> f.getName().equals("id") && f.getTags().contains(tag)));
    record("deleteDatasetTag", () -> !client.deleteDatasetTag(ns, input, tag).getTags().contains(tag));
    record("createJob", () -> client.createJob(ns, job, JobMeta.builder().type(JobType.BATCH)
        .inputs(ns, input).outputs(ns, output).location("https://git.example/etl/daily_totals.py")
        .description("sums a day").build()).getName().equals(job));
    record("getJob", () -> client.getJob(ns, job).getInputs().equals(Set.of(new DatasetId(ns, input))));
    record("listJobs", () -> client.listJobs(ns).stream().anyMatch(j -> j.getName().equals(job)));
    record("createRun", () -> {
      var run = client.createRun(ns, job, RunMeta.builder().id(UUID.randomUUID().toString())
          .nominalStartTime(t0).nominalEndTime(t0.plusSeconds(3600)).args(Map.of("day", "today")).build());
      values.put("completed", run.getId());
      return run.getState() == RunState.NEW;
    });
    record("createRunAndStart", () -> {
      var run = client.createRunAndStart(ns, job, RunMeta.builder().build());
      values.put("failed", run.getId());
      return run.getState() == RunState.RUNNING;
    });
    record("getRun", () -> client.getRun(values.get("completed")).getState() == RunState.NEW);
    record("listRuns", () -> client.listRuns(ns, job).stream().anyMatch(r -> r.getId().equals(values.get("completed"))));
    record("markRunAsRunning", () -> client.markRunAsRunning(values.get("completed"), t0.plusSeconds(60)).getState() == RunState.RUNNING);
    record("markRunAsCompleted", () -> client.markRunAsCompleted(values.get("completed"), t0.plusSeconds(120)).getState() == RunState.COMPLETED);
    record("markRunAsFailed", () -> client.markRunAsFailed(values.get("failed"), t0.plusSeconds(180)).getState() == RunState.FAILED);
    record("markRunAsAborted", () -> {
      var run = client.createRun(ns, job, RunMeta.builder().build());
      return client.markRunAsAborted(run.getId(), t0.plusSeconds(240)).getState() == RunState.ABORTED;
    });
    record("markRunAs", () -> {
      var run = client.createRun(ns, job, RunMeta.builder().build());
      return client.markRunAs(run.getId(), RunState.RUNNING, t0.plusSeconds(300)).getState() == RunState.RUNNING;
    });
    record("listJobVersions", () -> {
      var versions = client.listJobVersions(ns, job, 100, 0);
      if (!versions.isEmpty()) values.put("jobVersion", versions.get(0).getVersion().toString());
      return !versions.isEmpty();
    });
    record("getJobVersion", () -> client.getJobVersion(ns, job, values.get("jobVersion")).getName().equals(job));
    record("tagJobWith", () -> client.tagJobWith(ns, job, tag).getTags().contains(tag));
    record("deleteJobTag", () -> !client.deleteJobTag(ns, job, tag).getTags().contains(tag));
    record("listLineageEvents", () -> client.listLineageEvents() != null);
    record("listLineageEvents(before, after)", () -> client.listLineageEvents(MarquezClient.SortDirection.ASC,
        ZonedDateTime.now(ZoneOffset.UTC).plusDays(1), ZonedDateTime.now(ZoneOffset.UTC).minusDays(30), 100) != null);
    record("getLineage", () -> client.getLineage(NodeId.of(new JobId(ns, job))).getGraph().stream()
        .anyMatch(node -> node.getId().getValue().equals("job:" + ns + ":" + job)));
    record("getColumnLineage", () -> client.getColumnLineage(NodeId.of(new DatasetId(ns, output))).getGraph() != null);
    record("search", () -> client.search("daily").getTotalCount() >= 1);
    record("search(filter)", () -> client.search("daily", SearchFilter.JOB).getTotalCount() >= 1);
    record("search(sort)", () -> client.search("daily", SearchSort.NAME).getTotalCount() >= 1);
    record("deleteJob", () -> client.deleteJob(ns, job).getName().equals(job));
    record("deleteDataset", () -> client.deleteDataset(ns, output).getName().equals(output));
    record("deleteNamespace", () -> {
      client.deleteNamespace(ns);
      return true;
    });
  }

  private static void record(String call, Callable<Boolean> check) {
    Integer status = null;
    String error = null;
    try {
      if (!Boolean.TRUE.equals(check.call())) error = "the answer does not say what was asked";
    } catch (MarquezHttpException e) {
      status = e.getCode();
      error = e.getClass().getSimpleName() + ": " + e.getMessage();
    } catch (Exception e) {
      error = e.getClass().getSimpleName() + ": " + e.getMessage();
    }
    System.out.println("{\"call\":" + json(call) + ",\"pass\":" + (error == null) + ",\"status\":" + status
        + ",\"error\":" + (error == null ? "null" : json(error.length() > 600 ? error.substring(0, 600) : error)) + "}");
    System.out.flush();
  }

  private static String json(String text) {
    StringBuilder out = new StringBuilder("\"");
    for (char c : text.toCharArray()) {
      if (c == '"' || c == '\\') out.append('\\').append(c);
      else if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
      else out.append(c);
    }
    return out.append('"').toString();
  }
}
