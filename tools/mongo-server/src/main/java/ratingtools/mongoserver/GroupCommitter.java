package ratingtools.mongoserver;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

import org.h2.mvstore.MVStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes writes to an MVStore durable in groups: one committer thread commits and fsyncs the store once for all writes
 * done so far, then releases every write that this covers.
 *
 * <p>Protocol: a write command calls {@link #recordWrite()} while it still holds the server's exclusive lock, after it
 * changed the store; the returned sequence number stands for "this write and every earlier one". Its reply is sent
 * only once {@link #isDurable(long) isDurable(seq)} (see {@link #whenDurable} and {@link #awaitDurable}).
 *
 * <p>The committer thread loops: it takes the server's <em>shared</em> lock (so no write command is half-done and
 * none can start; readers keep running), reads the last recorded sequence number, calls {@link MVStore#commit()}
 * (which in H2 2.3 serializes the changed pages and writes the chunk with {@code FileChannel.write}, but does not
 * force it), releases the lock, then calls {@link MVStore#sync()} ({@code FileChannel.force(true)}). Only then is
 * that sequence number durable. Writes arriving during the fsync are picked up by the next round, so one fsync
 * covers however many writes queued up meanwhile (group commit).
 *
 * <p>The store must be opened with auto-commit disabled (no background writer, no commit triggered by unsaved
 * memory), so that this is the only place that commits: every chunk on disk is then a snapshot taken between
 * commands, never in the middle of one.
 *
 * <p>If a commit or fsync fails, durability can no longer be promised: the failure is sticky, every waiter (now and
 * later) is told, and no further write is reported durable.
 */
final class GroupCommitter implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(GroupCommitter.class);

    /** How often to compact (only while there are writes to commit). */
    private static final long HOUSEKEEPING_INTERVAL_NANOS = 200_000_000L;
    /** Compact when the live share of all chunks falls below this percentage. */
    private static final int COMPACT_BELOW_FILL_RATE = 50;
    /** Rewrite at most about this much live data per compaction. */
    private static final int COMPACT_WRITE_BYTES = 1 << 20;

    private final MVStore store;
    /** The server's shared (read) lock: held while committing, so a commit never sees half of a command. */
    private final Lock snapshotLock;
    private final Thread thread;

    /** Sequence number of the last write recorded (incremented under the server's exclusive lock). */
    private final AtomicLong written = new AtomicLong();
    /** Every write with a sequence number up to this one is committed and synced. */
    private volatile long durable;
    private volatile Throwable failure;
    private volatile boolean closing;

    /** Callbacks waiting for a sequence number to become durable; guarded by itself. */
    private final List<Waiter> waiters = new ArrayList<>();

    private record Waiter(long seq, Consumer<Throwable> callback) {
    }

    GroupCommitter(MVStore store, Lock snapshotLock) {
        this.store = store;
        this.snapshotLock = snapshotLock;
        this.thread = new Thread(this::run, "mongo-server-group-commit");
        this.thread.setDaemon(true);
        this.thread.start();
    }

    /**
     * Records that a write command has changed (or may have changed) the store. Call while holding the server's
     * exclusive lock, after the command ran, so that the number orders the write after everything before it.
     *
     * @return the sequence number to wait for before acknowledging the write
     */
    long recordWrite() {
        long seq = written.incrementAndGet();
        LockSupport.unpark(thread);
        return seq;
    }

    /** Whether the write with this sequence number (and every earlier one) is committed and synced. */
    boolean isDurable(long seq) {
        return durable >= seq;
    }

    /**
     * Calls {@code callback} with {@code null} once {@code seq} is durable, or with the error if it cannot become
     * durable. Runs the callback on the calling thread if that is already known, otherwise on the committer thread
     * (so it must be quick and must not block).
     */
    void whenDurable(long seq, Consumer<Throwable> callback) {
        synchronized (waiters) {
            if (durable < seq && failure == null) {
                waiters.add(new Waiter(seq, callback));
                return;
            }
        }
        callback.accept(durable >= seq ? null : failure);
    }

    /** Blocks until {@code seq} is durable; throws if it cannot become durable. */
    void awaitDurable(long seq) {
        if (durable >= seq) {
            return;
        }
        Object done = new Object();
        Throwable[] result = new Throwable[1];
        boolean[] called = new boolean[1];
        whenDurable(seq, error -> {
            synchronized (done) {
                result[0] = error;
                called[0] = true;
                done.notifyAll();
            }
        });
        boolean interrupted = false;
        synchronized (done) {
            while (!called[0]) {
                try {
                    done.wait();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        if (result[0] != null) {
            throw notDurable(result[0]);
        }
    }

    static RuntimeException notDurable(Throwable cause) {
        return new IllegalStateException("write could not be made durable: " + cause, cause);
    }

    private void run() {
        long committed = 0;
        long lastHousekeeping = System.nanoTime();
        long syncedVersion = store.getCurrentVersion();
        try {
            while (true) {
                if (written.get() == committed) {
                    if (closing) {
                        break;
                    }
                    LockSupport.park(this);
                    continue;
                }
                long target;
                snapshotLock.lock();
                try {
                    target = written.get(); // no write command is running: all up to target are complete
                    long now = System.nanoTime();
                    if (now - lastHousekeeping >= HOUSEKEEPING_INTERVAL_NANOS) {
                        lastHousekeeping = now;
                        housekeeping();
                    }
                    store.commit(); // no-op (returns -1) if nothing changed
                } finally {
                    snapshotLock.unlock();
                }
                long version = store.getCurrentVersion();
                if (version != syncedVersion) {
                    store.sync(); // FileChannel.force(true): commit() itself only writes to the OS page cache
                    syncedVersion = version;
                }
                committed = target;
                durable = target;
                release(null);
            }
        } catch (Throwable t) {
            failure = t;
            log.error("mongo-server: committing the H2 store failed; writes can no longer be acknowledged", t);
            release(t);
            return;
        }
        // closing: anything that still waits will not be acknowledged by us
        failure = new IllegalStateException("server is shutting down");
        release(failure);
    }

    /**
     * What MVStore's background thread would otherwise do: rewrite the live pages of sparsely used chunks, so that
     * their space can be reused. Without it the file keeps growing, since with small frequent commits most chunks
     * keep a few live pages for a long time. The rewritten pages go out with the commit that follows.
     */
    private void housekeeping() {
        try {
            store.compact(COMPACT_BELOW_FILL_RATE, COMPACT_WRITE_BYTES);
        } catch (RuntimeException e) {
            log.warn("H2 store compaction failed (data is not affected)", e);
        }
    }

    /** Calls the callbacks whose sequence number is now durable (all of them, with the error, on failure). */
    private void release(Throwable error) {
        List<Waiter> ready = new ArrayList<>();
        synchronized (waiters) {
            for (Iterator<Waiter> it = waiters.iterator(); it.hasNext(); ) {
                Waiter waiter = it.next();
                if (error != null || durable >= waiter.seq) {
                    ready.add(waiter);
                    it.remove();
                }
            }
        }
        for (Waiter waiter : ready) {
            try {
                waiter.callback.accept(durable >= waiter.seq ? null : error);
            } catch (RuntimeException e) {
                log.warn("durability callback failed", e);
            }
        }
    }

    /** Commits what is recorded, stops the committer thread and fails whatever still waits. */
    @Override
    public void close() {
        closing = true;
        LockSupport.unpark(thread);
        boolean interrupted = false;
        while (thread.isAlive()) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
