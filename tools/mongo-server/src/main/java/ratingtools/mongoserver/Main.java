package ratingtools.mongoserver;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import org.h2.mvstore.MVStore;

import de.bwaldvogel.mongo.MongoBackend;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.MongoVersion;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;

/**
 * Launcher for a MongoDB-wire-protocol server backed by mongo-java-server.
 *
 * <pre>
 * java -jar mongo-server.jar [--host 127.0.0.1] [--port 0] [--h2 /path/to/file.mv] [--no-stdin-watch]
 * </pre>
 *
 * Prints exactly one line {@code READY <host>:<port>} to stdout once listening; all logging goes to stderr.
 * Exits when stdin reaches EOF (parent died) unless {@code --no-stdin-watch} is given.
 */
public final class Main {

    private Main() {
    }

    private static final String USAGE =
        "usage: java -jar mongo-server.jar [--host HOST] [--port PORT] [--h2 FILE] [--no-stdin-watch]\n"
            + "  --host HOST       address to bind (default 127.0.0.1)\n"
            + "  --port PORT       port to bind, 0 = pick a free port (default 0)\n"
            + "  --h2 FILE         persist to this H2 MVStore file (parent dirs are created);\n"
            + "                    without it the in-memory backend is used\n"
            + "  --no-stdin-watch  do not exit when stdin is closed (for standalone use)\n";

    public static void main(String[] args) {
        // Keep stdout clean: it carries only the READY line. Everything else goes to stderr.
        PrintStream stdout = System.out;
        System.setOut(System.err);

        String host = "127.0.0.1";
        int port = 0;
        String h2File = null;
        boolean stdinWatch = true;

        try {
            for (int i = 0; i < args.length; i++) {
                String arg = args[i];
                switch (arg) {
                    case "--host":
                        host = requireValue(args, ++i, arg);
                        break;
                    case "--port":
                        port = Integer.parseInt(requireValue(args, ++i, arg));
                        if (port < 0 || port > 65535) {
                            throw new IllegalArgumentException("invalid port: " + port);
                        }
                        break;
                    case "--h2":
                        h2File = requireValue(args, ++i, arg);
                        break;
                    case "--no-stdin-watch":
                        stdinWatch = false;
                        break;
                    case "-h":
                    case "--help":
                        stdout.print(USAGE);
                        stdout.flush();
                        return;
                    default:
                        throw new IllegalArgumentException("unknown argument: " + arg);
                }
            }
        } catch (IllegalArgumentException e) {
            System.err.println("mongo-server: " + e.getMessage());
            System.err.print(USAGE);
            System.exit(2);
            return;
        }

        final MongoBackend rawBackend;
        final MVStore mvStore;
        if (h2File != null) {
            File file = new File(h2File).getAbsoluteFile();
            File parent = file.getParentFile();
            if (parent != null && !parent.isDirectory() && !parent.mkdirs() && !parent.isDirectory()) {
                System.err.println("mongo-server: cannot create directory " + parent);
                System.exit(1);
                return;
            }
            // No auto-commit (no background writer thread, no commit triggered by unsaved memory): the group committer
            // in SerializingBackend is the only one that commits, after every write command and before its reply,
            // and it syncs the file. close() on shutdown stores the rest.
            mvStore = new MVStore.Builder()
                .fileName(file.getPath())
                .autoCommitDisabled()
                .autoCommitBufferSize(0)
                .open();
            // Chunks no longer in use may be overwritten at once instead of after 45 s. The 45 s default covers
            // unsynced writes and readers of old versions; here every commit is synced before the next one, and
            // nothing reads an old version (commands run under SerializingBackend's lock and materialize their
            // results; the committer commits under the shared lock, so no write runs meanwhile). With a commit per
            // write group, the default would let the file grow by every chunk written in the last 45 s.
            mvStore.setRetentionTime(0);
            rawBackend = KeyLookupBackends.h2(mvStore);
        } else {
            mvStore = null;
            rawBackend = KeyLookupBackends.memory();
        }

        // mongo-java-server 1.47.0 reports version 5.0.0 with maxWireVersion 8, but Node driver 7.x requires >= 9
        // (MongoDB 4.4). In drivers 6.x/7.x, going from 8 to 9 only lets explicitly requested options through
        // (`comment` on listCollections/listIndexes/getMore, `commitQuorum`, hint on unacknowledged writes), which
        // the server ignores; nothing is used implicitly. So report 4.4.0 / wire version 9.
        rawBackend.version(new MongoVersion() {
            @Override
            public List<Integer> getVersionArray() {
                return List.of(4, 4, 0);
            }

            @Override
            public int getWireVersion() {
                return 9;
            }
        });

        // Per-document atomicity / isolation, and (H2) durable acknowledgements: see SerializingBackend for why and how.
        MongoBackend backend = mvStore != null ? new SerializingBackend(rawBackend, mvStore) : new SerializingBackend(rawBackend);
        MongoServer server = new MongoServer(backend);

        AtomicBoolean stopped = new AtomicBoolean();
        Runnable stop = () -> {
            if (!stopped.compareAndSet(false, true)) {
                return;
            }
            try {
                server.shutdownNow(); // closes clients, event loops and the backend (H2: MVStore.close())
            } catch (RuntimeException e) {
                System.err.println("mongo-server: error during shutdown: " + e);
            }
            if (mvStore != null && !mvStore.isClosed()) {
                try {
                    mvStore.close();
                } catch (RuntimeException e) {
                    System.err.println("mongo-server: error closing H2 store: " + e);
                }
            }
        };
        Runtime.getRuntime().addShutdownHook(new Thread(stop, "mongo-server-shutdown"));

        try {
            server.bind(host, port);
        } catch (RuntimeException e) {
            System.err.println("mongo-server: failed to bind " + host + ":" + port + ": " + e);
            System.exit(1);
            return;
        }

        InetSocketAddress address = server.getLocalAddress();
        stdout.println("READY " + host + ":" + address.getPort());
        stdout.flush();

        if (stdinWatch) {
            Thread watcher = new Thread(Main::watchStdin, "mongo-server-stdin-watch");
            watcher.setDaemon(true);
            watcher.start();
        }
        // Netty's non-daemon event loop threads keep the JVM alive until shutdown.
    }

    /** Parent processes keep our stdin open; EOF (or an error) means the parent is gone. */
    private static void watchStdin() {
        InputStream in = System.in;
        byte[] buffer = new byte[256];
        try {
            while (in.read(buffer) >= 0) {
                // discard whatever the parent writes
            }
        } catch (IOException e) {
            // treat like EOF
        }
        System.exit(0);
    }

    private static String requireValue(String[] args, int index, String option) {
        if (index >= args.length) {
            throw new IllegalArgumentException("missing value for " + option);
        }
        return args[index];
    }
}
