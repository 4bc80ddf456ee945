package io.yarnam.mr;

import java.util.Locale;

import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.JobID;

/**
 * How the benchmark jobs report to scripts/mr_bench.py, which reads their stdout: "APP_ID
 * application_..." as soon as the job is submitted (so it can sample the MR AM's memory), then
 * "RESULT {json}" with the submit and end times and the outcome.
 */
final class JobReport {
  private JobReport() {}

  /** Submits the job, waits for it, reports; returns the exit code (0 when it succeeded). */
  static int run(Job job) throws Exception {
    long submitMs = System.currentTimeMillis();
    job.submit();
    JobID id = job.getJobID();
    System.out.println("APP_ID application_" + id.getJtIdentifier() + "_"
        + String.format(Locale.ROOT, "%04d", id.getId()));
    System.out.flush();
    while (!job.isComplete()) {
      Thread.sleep(250);
    }
    long endMs = System.currentTimeMillis();
    boolean ok = job.isSuccessful();
    System.out.println(String.format(Locale.ROOT,
        "RESULT {\"job_id\":\"%s\",\"submit_ms\":%d,\"end_ms\":%d,\"succeeded\":%b}",
        id, submitMs, endMs, ok));
    return ok ? 0 : 1;
  }
}
