package ratingtools.mongoserver;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import de.bwaldvogel.mongo.bson.Document;

/**
 * Makes the documents an insert stores share one String per field name and per repeated short value.
 *
 * <p>Why: the BSON decoder creates a new String for every field name of every document, and the memory backend keeps
 * those documents for good. A call record (its rate and parties are subdocuments) has about 50 field names: with a
 * String object and its byte array each, they were a large part of every stored record, and so of what the garbage
 * collector copies when a million imported records move to the old generation (issue 12: the import spent a third of
 * its time in the collector's pauses).
 *
 * <p>What: before an {@code insert} command runs (outside the server's lock, on the connection's thread), its
 * documents are rebuilt with canonical field names, kept in a bounded map (past {@link #MAX_NAMES} distinct names, new
 * ones are kept as they came, so a client inventing field names cannot grow it without bound), and short string values
 * that repeat are shared through a small lossy cache ({@link #sharedValue}). Field order and every value are kept
 * equal, so what is stored is equal to what came.
 *
 * <p>In-memory backend only: see {@link SerializingBackend} for why H2 must see unshared Strings.
 */
final class SharedInsertStrings {

    static final int MAX_NAMES = 100_000;

    private static final int MAX_SHARED_VALUE_LENGTH = 64;
    private static final int VALUE_SLOTS_BITS = 16;

    private final Map<String, String> names = new ConcurrentHashMap<>();
    private final String[] values = new String[1 << VALUE_SLOTS_BITS];

    /** Rewrites the {@code documents} of an {@code insert} command message in place; any other message is left alone. */
    void shareInsert(String command, Document message) {
        if (!"insert".equals(command) || !(message.get("documents") instanceof List<?> documents)) {
            return;
        }
        List<Object> shared = new ArrayList<>(documents.size());
        for (Object document : documents) {
            shared.add(share(document));
        }
        message.put("documents", shared);
    }

    private Object share(Object value) {
        if (value instanceof Document document) {
            Document out = new Document();
            for (Map.Entry<String, Object> entry : document.entrySet()) {
                out.put(name(entry.getKey()), share(entry.getValue()));
            }
            return out;
        }
        if (value instanceof List<?> list) {
            List<Object> out = new ArrayList<>(list.size());
            for (Object element : list) {
                out.add(share(element));
            }
            return out;
        }
        if (value instanceof String string && string.length() <= MAX_SHARED_VALUE_LENGTH) {
            return sharedValue(string);
        }
        return value;
    }

    /**
     * A recent equal string value, or this one: a direct-mapped cache (a slot per hash, the newest wins), so values
     * that repeat from document to document (an account, a rate's prefix and carrier, a batch id) are stored once
     * while unique ones (ids, tags) only overwrite slots. Bounded, and lossy by design. Racy on purpose: a String is
     * immutable and safely published, so a slot read while another thread writes it is either string, both correct.
     */
    private String sharedValue(String value) {
        int slot = (value.hashCode() * 0x9E3779B9) >>> (32 - VALUE_SLOTS_BITS);
        String cached = values[slot];
        if (value.equals(cached)) {
            return cached;
        }
        values[slot] = value;
        return value;
    }

    private String name(String name) {
        String canonical = names.get(name);
        if (canonical != null) {
            return canonical;
        }
        if (names.size() >= MAX_NAMES) {
            return name;
        }
        canonical = names.putIfAbsent(name, name);
        return canonical == null ? name : canonical;
    }
}
