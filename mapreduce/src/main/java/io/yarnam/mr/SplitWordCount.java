package io.yarnam.mr;

import java.io.IOException;
import java.util.Locale;

import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.NullWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.lib.input.FileSplit;
import org.apache.hadoop.mapreduce.lib.input.TextInputFormat;

/**
 * conf/examples/hdfs-job.json's work (`{split.cat} | wc -w` per block) as a map-only MapReduce
 * job, for the side-by-side benchmark (scripts/mr_bench.py --work words): one map per
 * FileInputFormat split, reading whole lines with TextInputFormat (the record rule yarn-am's
 * `split cat` follows), counting words as `wc -w` does in the C locale (runs of bytes other
 * than space, \t, \n, \v, \f, \r) and writing "path offset length count" once at the end.
 *
 * <pre>java -cp ... io.yarnam.mr.SplitWordCount [-D key=value ...] INPUT_GLOB OUTPUT_DIR</pre>
 *
 * Prints "APP_ID application_..." once submitted and "RESULT {json}" at the end, as
 * SplitLineCount does; exits 1 when the job fails.
 */
public final class SplitWordCount {
  private SplitWordCount() {}

  /** Sums the words of its split's lines; writes the split's line in cleanup. */
  public static final class WordsMapper
      extends Mapper<LongWritable, Text, Text, NullWritable> {
    private long words;

    private static boolean space(byte b) {
      return b == ' ' || (b >= '\t' && b <= '\r');
    }

    @Override
    protected void map(LongWritable offset, Text line, Context context) {
      byte[] bytes = line.getBytes();
      boolean inWord = false;
      for (int i = 0; i < line.getLength(); i++) {
        boolean s = space(bytes[i]);
        if (!s && !inWord) {
          words++;
        }
        inWord = !s;
      }
    }

    @Override
    protected void cleanup(Context context) throws IOException, InterruptedException {
      FileSplit split = (FileSplit) context.getInputSplit();
      String out = String.format(Locale.ROOT, "%s %d %d %d", split.getPath().toUri().getPath(),
          split.getStart(), split.getLength(), words);
      context.write(new Text(out), NullWritable.get());
    }
  }

  public static void main(String[] args) throws Exception {
    Job job = JobReport.mapOnly(args, SplitWordCount.class, "mr-split-word-count");
    job.setInputFormatClass(TextInputFormat.class);
    job.setMapperClass(WordsMapper.class);
    System.exit(JobReport.run(job));
  }
}
