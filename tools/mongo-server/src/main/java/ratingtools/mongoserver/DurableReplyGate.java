package ratingtools.mongoserver;

import java.nio.channels.ClosedChannelException;
import java.util.ArrayDeque;
import java.util.concurrent.RejectedExecutionException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.util.ReferenceCountUtil;

/**
 * Holds back the reply to a write command until the {@link GroupCommitter} reports the write durable, without
 * blocking the Netty event loop (which serves other connections, and reads, meanwhile).
 *
 * <p>mongo-java-server's {@code MongoDatabaseHandler} calls the backend and then, in the same call on the channel's
 * event loop, writes the encoded reply with {@code channel.writeAndFlush}. So the backend marks the channel's next
 * reply with the write's sequence number ({@link #holdNextReply}), and this handler, installed at the head of the
 * channel's pipeline (after the encoders, just before the socket), keeps that reply and everything written after it on
 * this channel (replies stay in order) until the sequence number is durable. If durability fails, the held replies are
 * dropped and the connection is closed, so the client sees a network error (outcome unknown), never a false ack.
 *
 * <p>All state is touched on the channel's event loop only.
 */
final class DurableReplyGate extends ChannelOutboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(DurableReplyGate.class);
    private static final String NAME = "durable-reply-gate";

    private final GroupCommitter committer;
    private ChannelHandlerContext ctx;
    /** Sequence number the next written reply must wait for; 0 = none. */
    private long nextReplySeq;
    private final ArrayDeque<Held> held = new ArrayDeque<>();
    /** Whether a callback from the committer is outstanding. */
    private boolean waiting;

    private record Held(Object message, ChannelPromise promise, long seq) {
    }

    private DurableReplyGate(GroupCommitter committer) {
        this.committer = committer;
    }

    /**
     * Makes the next reply written on {@code channel} wait until {@code seq} is durable. Must be called on the
     * channel's event loop, before the reply is written.
     */
    static void holdNextReply(Channel channel, GroupCommitter committer, long seq) {
        ChannelPipeline pipeline = channel.pipeline();
        DurableReplyGate gate = (DurableReplyGate) pipeline.get(NAME);
        if (gate == null) {
            gate = new DurableReplyGate(committer);
            pipeline.addFirst(NAME, gate);
        }
        gate.nextReplySeq = Math.max(gate.nextReplySeq, seq);
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        long seq = nextReplySeq;
        nextReplySeq = 0;
        if (held.isEmpty() && (seq == 0 || committer.isDurable(seq))) {
            ctx.write(msg, promise);
            return;
        }
        held.add(new Held(msg, promise, seq));
        waitForCommit();
    }

    // flush() passes through: it only flushes what was passed on; held replies are flushed when released.

    private void waitForCommit() {
        if (waiting || held.isEmpty()) {
            return;
        }
        long seq = 0;
        for (Held h : held) {
            seq = Math.max(seq, h.seq);
        }
        waiting = true;
        committer.whenDurable(seq, error -> {
            try {
                ctx.executor().execute(() -> release(error));
            } catch (RejectedExecutionException e) {
                // event loop shut down (server stopping): the channel is gone with it
            }
        });
    }

    private void release(Throwable error) {
        waiting = false;
        if (error != null) {
            log.warn("closing a client connection: its write could not be made durable ({})", error.toString());
            dropHeld(GroupCommitter.notDurable(error));
            ctx.close();
            return;
        }
        boolean wrote = false;
        while (!held.isEmpty() && (held.peek().seq == 0 || committer.isDurable(held.peek().seq))) {
            Held h = held.poll();
            ctx.write(h.message, h.promise);
            wrote = true;
        }
        if (wrote) {
            ctx.flush();
        }
        waitForCommit();
    }

    private void dropHeld(Throwable cause) {
        Held h;
        while ((h = held.poll()) != null) {
            ReferenceCountUtil.release(h.message);
            h.promise.tryFailure(cause);
        }
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        dropHeld(new ClosedChannelException());
    }
}
