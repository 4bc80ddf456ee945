package io.yarnam.mr;

import java.io.IOException;
import java.io.InputStream;
import java.util.Locale;

import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.NullWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.InputSplit;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.RecordReader;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.input.FileInputFormat;
import org.apache.hadoop.mapreduce.lib.input.FileSplit;

/**
 * The yarn-am HDFS example's per-split work as a map-only MapReduce job, for the side-by-side
 * benchmark (scripts/mr_bench.py): one map per split (FileInputFormat's, one per block), which
 * counts the newline bytes in its split's byte range and writes "path offset length count",
 * the line the yarn-am side's command prints (`curl` of the split's range | `wc -l`; set in
 * scripts/mr_bench.py since conf/examples/hdfs-job.json became a word count).
 *
 * <pre>java -cp ... io.yarnam.mr.SplitLineCount [-D key=value ...] INPUT_GLOB OUTPUT_DIR</pre>
 *
 * On the test cluster the classpath starts with the runtime folder's mr-conf/ (`cluster.sh
 * mapreduce`), whose default file system is HDFS.
 *
 * Prints "APP_ID application_..." once submitted and "RESULT {json}" at the end (submit and
 * end times, state); exits 1 when the job fails. Settings come from mapred-site.xml on the
 * classpath.
 */
public final class SplitLineCount {
  private SplitLineCount() {}

  /** Block splits as FileInputFormat makes them; each yields one record: nothing to read. */
  public static final class SplitsOnly extends FileInputFormat<NullWritable, NullWritable> {
    @Override
    public RecordReader<NullWritable, NullWritable> createRecordReader(
        InputSplit split, TaskAttemptContext context) {
      return new RecordReader<>() {
        private boolean done;

        @Override
        public void initialize(InputSplit s, TaskAttemptContext c) {}

        @Override
        public boolean nextKeyValue() {
          if (done) {
            return false;
          }
          done = true;
          return true;
        }

        @Override
        public NullWritable getCurrentKey() {
          return NullWritable.get();
        }

        @Override
        public NullWritable getCurrentValue() {
          return NullWritable.get();
        }

        @Override
        public float getProgress() {
          return done ? 1f : 0f;
        }

        @Override
        public void close() {}
      };
    }
  }

  /** Reads its split's byte range and writes its newline count. */
  public static final class CountMapper
      extends Mapper<NullWritable, NullWritable, Text, NullWritable> {
    @Override
    protected void map(NullWritable k, NullWritable v, Context context)
        throws IOException, InterruptedException {
      FileSplit split = (FileSplit) context.getInputSplit();
      Path path = split.getPath();
      FileSystem fs = path.getFileSystem(context.getConfiguration());
      long lines = 0;
      long left = split.getLength();
      byte[] buf = new byte[1 << 16];
      try (FSDataInputStream in = fs.open(path)) {
        in.seek(split.getStart());
        while (left > 0) {
          int n = in.read(buf, 0, (int) Math.min(buf.length, left));
          if (n < 0) {
            throw new IOException(path + " ended " + left + " bytes before its split did");
          }
          for (int i = 0; i < n; i++) {
            if (buf[i] == '\n') {
              lines++;
            }
          }
          left -= n;
        }
      }
      String line = String.format(Locale.ROOT, "%s %d %d %d", path.toUri().getPath(),
          split.getStart(), split.getLength(), lines);
      context.write(new Text(line), NullWritable.get());
    }
  }

  public static void main(String[] args) throws Exception {
    Job job = JobReport.mapOnly(args, SplitLineCount.class, "mr-split-line-count");
    job.setInputFormatClass(SplitsOnly.class);
    job.setMapperClass(CountMapper.class);
    System.exit(JobReport.run(job));
  }
}
