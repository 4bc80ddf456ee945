package io.yarnam.mr;

import java.io.IOException;
import java.util.Locale;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.NullWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.lib.input.FileInputFormat;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;
import org.apache.hadoop.mapreduce.lib.output.TextOutputFormat;
import org.apache.hadoop.util.GenericOptionsParser;

/**
 * How the benchmark jobs report to scripts/mr_bench.py, which reads their stdout: "APP_ID
 * application_..." as soon as the job is submitted (so it can sample the MR AM's memory), then
 * "RESULT {json}" with the submit and end times and the outcome.
 */
final class JobReport {
  private JobReport() {}

  /**
   * A map-only job of {@code main}'s arguments ({@code [-D key=value ...] INPUT_GLOB
   * OUTPUT_DIR}; exits 2 naming {@code name} on others) writing its maps' text lines to
   * OUTPUT_DIR, emptied first; the caller sets the input format and the mapper.
   */
  static Job mapOnly(String[] args, Class<?> main, String jobName) throws IOException {
    GenericOptionsParser parsed = new GenericOptionsParser(new Configuration(), args);
    String[] rest = parsed.getRemainingArgs();
    if (rest.length != 2) {
      System.err.println("usage: " + main.getSimpleName() + " [-D key=value ...] INPUT_GLOB OUTPUT_DIR");
      System.exit(2);
    }
    Job job = Job.getInstance(parsed.getConfiguration(), jobName);
    job.setJarByClass(main);
    job.setNumReduceTasks(0);
    job.setOutputFormatClass(TextOutputFormat.class);
    job.setOutputKeyClass(Text.class);
    job.setOutputValueClass(NullWritable.class);
    FileInputFormat.addInputPath(job, new Path(rest[0]));
    Path out = new Path(rest[1]);
    out.getFileSystem(job.getConfiguration()).delete(out, true);
    FileOutputFormat.setOutputPath(job, out);
    return job;
  }

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
