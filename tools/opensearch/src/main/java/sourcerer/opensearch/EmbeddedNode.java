package sourcerer.opensearch;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.opensearch.analysis.common.CommonAnalysisPlugin;
import org.opensearch.common.settings.Settings;
import org.opensearch.env.Environment;
import org.opensearch.http.HttpServerTransport;
import org.opensearch.index.mapper.MapperExtrasPlugin;
import org.opensearch.index.reindex.ReindexPlugin;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.node.Node;
import org.opensearch.painless.PainlessPlugin;
import org.opensearch.plugins.Plugin;
import org.opensearch.transport.Netty4Plugin;
import org.opensearch.transport.TransportService;

/**
 * One OpenSearch node, started from the jars on the classpath (no distribution, no Docker).
 *
 * <p>Arguments are node settings, {@code -Ekey=value} as for the real {@code opensearch} command; {@code path.home}
 * is required. Unless told otherwise the node is a single-node cluster on 127.0.0.1 with ephemeral ports, and it
 * prints {@code OPENSEARCH_URL=http://127.0.0.1:<port>} once it answers. With {@code --exit-on-eof} it stops when
 * its standard input closes, so a test run that dies cannot leave a node behind.
 */
public final class EmbeddedNode {

    /** Node's constructor that takes classpath plugins is protected in 2.x. */
    static final class ClasspathNode extends Node {
        ClasspathNode(Environment environment, Collection<Class<? extends Plugin>> plugins) {
            super(environment, plugins, true);
        }
    }

    /** k-NN is published only as a zip (unpacked into target/lib), so it is found at run time, not compiled against. */
    static List<Class<? extends Plugin>> plugins() throws ClassNotFoundException {
        Class<? extends Plugin> knn = Class.forName("org.opensearch.knn.plugin.KNNPlugin").asSubclass(Plugin.class);
        return List.of(
            Netty4Plugin.class, ReindexPlugin.class, CommonAnalysisPlugin.class, MapperExtrasPlugin.class,
            PainlessPlugin.class, knn);
    }

    public static void main(String[] args) throws Exception {
        Settings.Builder given = Settings.builder();
        boolean exitOnEof = false;
        for (String arg : args) {
            if (arg.equals("--exit-on-eof")) {
                exitOnEof = true;
            } else if (arg.startsWith("-E") && arg.contains("=")) {
                String[] pair = arg.substring(2).split("=", 2);
                given.put(pair[0], pair[1]);
            } else {
                System.err.println("usage: EmbeddedNode -Epath.home=DIR [-Ekey=value ...] [--exit-on-eof]");
                System.exit(2);
            }
        }
        Settings settings = withDefaults(given.build());
        Path home = Path.of(settings.get("path.home"));
        for (String dir : List.of("config", "data", "logs", "plugins", "modules")) {
            Files.createDirectories(home.resolve(dir));
        }
        Environment environment = InternalSettingsPreparer.prepareEnvironment(
            settings, Map.of(), home.resolve("config"), () -> settings.get("node.name", "sourcerer-node"));
        Node node = new ClasspathNode(environment, plugins());
        Runtime.getRuntime().addShutdownHook(new Thread(() -> close(node)));
        node.start();

        int http = node.injector().getInstance(HttpServerTransport.class).boundAddress().publishAddress().getPort();
        int transport = node.injector().getInstance(TransportService.class).boundAddress().publishAddress().getPort();
        System.out.println("OPENSEARCH_URL=http://127.0.0.1:" + http);
        System.out.println("OPENSEARCH_TRANSPORT=127.0.0.1:" + transport);
        System.out.flush();

        if (exitOnEof) {
            waitForEof(System.in);
            System.exit(0);  // runs the shutdown hook
        }
        Thread.currentThread().join();
    }

    static Settings withDefaults(Settings given) {
        if (given.get("path.home") == null) {
            throw new IllegalArgumentException("-Epath.home=DIR is required");
        }
        Settings.Builder settings = Settings.builder()
            .put("cluster.name", "sourcerer-embedded")
            .put("network.host", "127.0.0.1")
            .put("http.port", "0")
            .put("transport.port", "0")
            // a nearly full disk would otherwise turn every index read-only in the middle of a test
            .put("cluster.routing.allocation.disk.threshold_enabled", false)
            .put("action.auto_create_index", false);
        if (given.get("discovery.seed_hosts") == null) {
            settings.put("discovery.type", "single-node");
        }
        return settings.put(given).build();
    }

    static void waitForEof(InputStream in) {
        byte[] buffer = new byte[256];
        try {
            while (in.read(buffer) >= 0) {
                // the parent writes nothing; it only holds the pipe open
            }
        } catch (IOException ignored) {
            // a broken pipe is an end of input too
        }
    }

    static void close(Node node) {
        try {
            node.close();
        } catch (IOException error) {
            System.err.println("closing the node: " + error);
        }
    }
}
