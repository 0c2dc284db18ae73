// Writes an HdrHistogram interval log with Java's HdrHistogram (2.2.2, the
// reference implementation), as load tools built on it do: 10 intervals of
// 1 s, each with a histogram of 500 latencies (µs) per tag, then prints
// each tag's totals as Java computes them: "TAG count p50 p99 max".
// Usage: java -cp HdrHistogram.jar:. WriteLog OUT.hlog
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogWriter;

public class WriteLog {
    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(new FileOutputStream(args[0]));
        HistogramLogWriter w = new HistogramLogWriter(out);
        long start = 1795662000000L;
        w.outputLogFormatVersion();
        w.outputStartTime(start);
        w.setBaseTime(start);
        w.outputLegend();
        Map<String, Histogram> totals = new LinkedHashMap<>();
        Map<String, Integer> spread = new LinkedHashMap<>();
        spread.put("GET_item", 5000);
        spread.put("POST_cart", 20000);
        Random r = new Random(42);
        for (int i = 0; i < 10; i++) {
            for (Map.Entry<String, Integer> e : spread.entrySet()) {
                Histogram h = new Histogram(1, 3600000000L, 3);
                h.setStartTimeStamp(start + i * 1000L);
                h.setEndTimeStamp(start + (i + 1) * 1000L);
                h.setTag(e.getKey());
                Histogram t = totals.computeIfAbsent(e.getKey(), k -> new Histogram(1, 3600000000L, 3));
                for (int k = 0; k < 500; k++) {
                    long v = 100 + (long) (r.nextDouble() * e.getValue() * (i < 5 ? 1 : 2));
                    h.recordValue(v);
                    t.recordValue(v);
                }
                w.outputIntervalHistogram(h);
            }
        }
        out.close();
        for (Map.Entry<String, Histogram> e : totals.entrySet()) {
            Histogram t = e.getValue();
            System.out.printf("%s %d %d %d %d%n", e.getKey(), t.getTotalCount(), t.getValueAtPercentile(50), t.getValueAtPercentile(99), t.getMaxValue());
        }
    }
}
