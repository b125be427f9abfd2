package ratingtools.mongoserver;

import java.time.Clock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;

import org.h2.mvstore.MVStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import de.bwaldvogel.mongo.MongoBackend;
import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.MongoVersion;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.exception.MongoServerException;
import de.bwaldvogel.mongo.wire.message.MongoMessage;
import de.bwaldvogel.mongo.wire.message.MongoQuery;
import io.netty.channel.Channel;

/**
 * Wraps a mongo-java-server backend so that single-document operations are atomic and isolated, as in real MongoDB.
 *
 * <p>Why: mongo-java-server serializes writes per collection (its collections' update/findAndModify/insert/delete
 * methods are {@code synchronized}), so concurrent {@code $inc} or conditional {@code $push} do not lose or overshoot
 * anything. But it applies updates <em>in place</em> to the stored {@code Document} objects and hands those same live
 * objects back in replies (find batches, cursors, the findAndModify {@code value}), which are then BSON-encoded on the
 * Netty thread <em>after</em> the collection lock was released. A concurrent update can therefore change a document
 * while it is being encoded: a reader may see a half-applied update, and {@code findOneAndUpdate(..., {returnDocument:
 * 'after'})} may return a later client's increment instead of its own (two callers seeing the same counter value).
 *
 * <p>What this does: every command runs under a server-wide read/write lock, and its reply is deep-copied before the
 * lock is released, so the encoded reply is an immutable snapshot. Commands that only read (find, getMore, count,
 * distinct, aggregate without $out/$merge, handshake/metadata commands) share the read lock and can run in parallel;
 * everything else (all writes, DDL, unknown commands) takes the exclusive write lock. Nothing in mongo-java-server
 * blocks while executing a command, so holding the lock for a command's duration is safe.
 *
 * <p>Durability (persistent store only, see {@link GroupCommitter}): every command that is not read-only records a
 * write sequence number with the group committer while it still holds the exclusive lock, and its reply (success or
 * error: a failed insertMany may have inserted some documents) is held back by {@link DurableReplyGate} until the
 * store is committed and synced up to that number. Read-only commands never wait for a commit. Without a persistent
 * store (in-memory backend) there is no committer and none of this runs.
 *
 * <p>It also replaces mongo-java-server's per-request error logging (every client error such as a duplicate key,
 * with a stack trace, at ERROR) by a WARN with stack trace for unexpected internal errors only.
 */
final class SerializingBackend implements MongoBackend {

    private static final Logger log = LoggerFactory.getLogger(SerializingBackend.class);

    /** Lower-case names of commands that never modify data. */
    private static final Set<String> READ_ONLY_COMMANDS = Set.of(
        "find", "getmore", "count", "distinct",
        "ping", "ismaster", "hello", "buildinfo", "whatsmyuri", "serverstatus", "hostinfo",
        "getparameter", "getcmdlineopts", "getlog", "connectionstatus", "getlasterror", "getpreverror",
        "listcollections", "listindexes", "listdatabases", "dbstats", "collstats", "validate");

    private final MongoBackend backend;
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    /**
     * Commands received from clients by kind, "command collection" (for example {@code update accounts}), reported
     * by serverStatus as {@code ratingCommandsByKind} and in all as {@code ratingCommands}: the benchmark reads them
     * before and after a step to print the commands a call costs under load, and which (docs/BENCHMARKS.md).
     * Bounded, so that clients naming ever new collections cannot grow it: past {@link #MAX_KINDS} kinds, new ones
     * count as "other".
     */
    private final Map<String, LongAdder> commandsByKind = new ConcurrentHashMap<>();
    private static final int MAX_KINDS = 500;
    /**
     * In-memory backend only. H2's MVStore compares index keys by their Java-serialized bytes, in which one String
     * referenced twice (a shared value) differs from two equal Strings: a shared value would never be found again.
     */
    private final SharedInsertStrings insertStrings;
    /** Null for the in-memory backend: then writes are acknowledged as soon as they are applied. */
    private final GroupCommitter committer;

    /** In-memory backend: no durability to wait for. */
    SerializingBackend(MongoBackend backend) {
        this.backend = backend;
        this.committer = null;
        this.insertStrings = new SharedInsertStrings();
    }

    /** Persistent backend on {@code store}, which must be opened with auto-commit disabled (see GroupCommitter). */
    SerializingBackend(MongoBackend backend, MVStore store) {
        this.backend = backend;
        this.committer = new GroupCommitter(store, lock.readLock());
        this.insertStrings = null;
    }

    private static boolean isReadOnly(String command, Document query) {
        String name = command.toLowerCase(Locale.ROOT);
        if (READ_ONLY_COMMANDS.contains(name)) {
            return true;
        }
        if (name.equals("aggregate") && query != null && query.get("pipeline") instanceof List) {
            for (Object stage : (List<?>) query.get("pipeline")) {
                if (!(stage instanceof Document)) {
                    return false;
                }
                Document stageDocument = (Document) stage;
                if (stageDocument.containsKey("$out") || stageDocument.containsKey("$merge")) {
                    return false;
                }
            }
            return true;
        }
        return false;
    }

    private <T> T locked(boolean readOnly, String what, Supplier<T> action) {
        Lock l = readOnly ? lock.readLock() : lock.writeLock();
        l.lock();
        try {
            return action.get();
        } catch (MongoServerException e) {
            throw e; // regular error reply to the client (duplicate key, bad query, ...)
        } catch (RuntimeException e) {
            log.warn("internal error while handling {}", what, e);
            throw e;
        } finally {
            l.unlock();
        }
    }

    /**
     * Runs a command whose reply goes to a client on {@code channel}. A write's reply, also an error reply (the command
     * may have changed data before it failed), is held until the write is durable.
     */
    private <T> T command(Channel channel, boolean readOnly, String what, Supplier<T> action) {
        if (readOnly || committer == null) {
            return locked(readOnly, what, action);
        }
        long[] seq = new long[1];
        try {
            return locked(false, what, () -> {
                try {
                    return action.get();
                } finally {
                    seq[0] = committer.recordWrite(); // still under the exclusive lock
                }
            });
        } finally {
            if (seq[0] != 0) {
                if (channel != null && channel.eventLoop().inEventLoop()) {
                    DurableReplyGate.holdNextReply(channel, committer, seq[0]);
                } else {
                    committer.awaitDurable(seq[0]); // not called from mongo-java-server's channel handler
                }
            }
        }
    }

    private static Document copy(Document document) {
        return document == null ? null : document.cloneDeeply();
    }

    private void count(String command, Document document) {
        Object target = document == null ? null : document.get(command);
        String kind = target instanceof String ? command + " " + target : command;
        LongAdder counter = commandsByKind.get(kind);
        if (counter == null) {
            counter = commandsByKind.size() < MAX_KINDS ? commandsByKind.computeIfAbsent(kind, k -> new LongAdder())
                : commandsByKind.computeIfAbsent("other", k -> new LongAdder());
        }
        counter.increment();
    }

    private Document commandsByKind() {
        Document byKind = new Document();
        new TreeMap<>(commandsByKind).forEach((kind, counter) -> byKind.put(kind, counter.sum()));
        return byKind;
    }

    @Override
    public Document handleCommand(Channel channel, String database, String command, Document query) {
        count(command, query);
        return command(channel, isReadOnly(command, query), command,
            () -> copy(backend.handleCommand(channel, database, command, query)));
    }

    @Override
    public Document handleMessage(MongoMessage message) {
        Document document = message.getDocument();
        String command = document.keySet().isEmpty() ? "" : document.keySet().iterator().next();
        if (insertStrings != null) {
            insertStrings.shareInsert(command, document);
        }
        count(command, document);
        Document reply = command(message.getChannel(), isReadOnly(command, document), command,
            () -> copy(backend.handleMessage(message)));
        if (reply != null && command.equalsIgnoreCase("serverStatus")) {
            reply.put("ratingCommands", commandsByKind.values().stream().mapToLong(LongAdder::sum).sum());
            reply.put("ratingCommandsByKind", commandsByKind());
        }
        return reply;
    }

    @Override
    public QueryResult handleQuery(MongoQuery query) {
        // Legacy OP_QUERY on a collection (modern drivers use OP_MSG); conservatively exclusive. It only queries:
        // OP_QUERY commands (collection "$cmd") go through handleCommand, so there is nothing to make durable here.
        return locked(false, "OP_QUERY", () -> {
            QueryResult result = backend.handleQuery(query);
            if (result == null) {
                return null;
            }
            List<Document> documents = new ArrayList<>();
            for (Document document : result) {
                documents.add(copy(document));
            }
            return new QueryResult(documents, result.getCursorId());
        });
    }

    @Override
    public Collection<Document> getCurrentOperations(MongoQuery query) {
        return locked(true, "currentOp", () -> {
            List<Document> documents = new ArrayList<>();
            for (Document document : backend.getCurrentOperations(query)) {
                documents.add(copy(document));
            }
            return documents;
        });
    }

    @Override
    public Document getServerStatus() {
        return locked(true, "serverStatus", () -> copy(backend.getServerStatus()));
    }

    @Override
    public void handleClose(Channel channel) {
        locked(false, "close of client connection", () -> {
            backend.handleClose(channel);
            return null;
        });
    }

    @Override
    public void dropDatabase(String database) {
        command(null, false, "dropDatabase", () -> {
            backend.dropDatabase(database);
            return null;
        });
    }

    @Override
    public void close() {
        if (committer != null) {
            committer.close(); // commits and syncs what was recorded, then stops; the store is closed below
        }
        backend.close();
    }

    @Override
    public void closeCursors(List<Long> cursorIds) {
        backend.closeCursors(cursorIds);
    }

    @Override
    public Clock getClock() {
        return backend.getClock();
    }

    @Override
    public void enableOplog() {
        backend.enableOplog();
    }

    @Override
    public void disableOplog() {
        backend.disableOplog();
    }

    @Override
    public MongoDatabase resolveDatabase(String database) {
        return backend.resolveDatabase(database);
    }

    @Override
    public MongoBackend version(MongoVersion version) {
        backend.version(version);
        return this;
    }
}
