package io.yarnam.mr;

import java.io.IOException;
import java.util.Locale;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.NullWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.lib.input.FileInputFormat;
import org.apache.hadoop.mapreduce.lib.input.FileSplit;
import org.apache.hadoop.mapreduce.lib.input.TextInputFormat;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;
import org.apache.hadoop.mapreduce.lib.output.TextOutputFormat;
import org.apache.hadoop.util.GenericOptionsParser;

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
    GenericOptionsParser parsed = new GenericOptionsParser(new Configuration(), args);
    Configuration conf = parsed.getConfiguration();
    args = parsed.getRemainingArgs();
    if (args.length != 2) {
      System.err.println("usage: SplitWordCount [-D key=value ...] INPUT_GLOB OUTPUT_DIR");
      System.exit(2);
    }
    Job job = Job.getInstance(conf, "mr-split-word-count");
    job.setJarByClass(SplitWordCount.class);
    job.setInputFormatClass(TextInputFormat.class);
    job.setMapperClass(WordsMapper.class);
    job.setNumReduceTasks(0);
    job.setOutputFormatClass(TextOutputFormat.class);
    job.setOutputKeyClass(Text.class);
    job.setOutputValueClass(NullWritable.class);
    FileInputFormat.addInputPath(job, new Path(args[0]));
    Path out = new Path(args[1]);
    out.getFileSystem(job.getConfiguration()).delete(out, true);
    FileOutputFormat.setOutputPath(job, out);
    System.exit(JobReport.run(job));
  }
}
