package de.bwaldvogel.mongo.backend;

import java.util.Collection;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.bson.BsonRegularExpression;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.exception.KeyConstraintError;

/**
 * A unique index that also narrows queries naming its keys <em>and</em> other conditions, as MongoDB's planner does.
 *
 * <p>Why: mongo-java-server uses an index only when a query's fields are exactly the index's fields. A conditional
 * update such as {@code {account_tag: "a", "running_transactions.id": "e"}} (the service's hot path: the key plus the
 * condition that makes the update safe) therefore scanned every document of the collection, so the cost of every
 * call grew with the number of accounts and records (issue 12: about half the server's CPU under load).
 *
 * <p>What: when every key of this unique index has a plain equality value in the query (not an operator document,
 * an array, a regular expression or null), the candidates are the (at most one) document(s) the index holds for
 * those values, and the collection then applies the whole query to them with its usual matcher, so the result is
 * the same as a scan's. The same for {@code {$in: [...]}} on a single-key unique index (one look-up per value).
 * Everything else goes to the wrapped index unchanged. It lives in mongo-java-server's package
 * only to reach the wrapped index's protected members.
 */
public final class KeyLookupIndex<P> extends Index<P> {

    private final Index<P> inner;

    public KeyLookupIndex(Index<P> inner) {
        super(inner.getName(), inner.getKeys(), inner.isSparse());
        this.inner = inner;
    }

    private boolean keysByEquality(Document query) {
        for (String key : keys()) {
            Object value = query.get(key);
            if (!isPlainValue(value) && !(keys().size() == 1 && isPlainInList(value))) {
                return false;
            }
        }
        return true;
    }

    private static boolean isPlainValue(Object value) {
        return !(value == null || value instanceof Document || value instanceof Collection
            || BsonRegularExpression.isRegularExpression(value));
    }

    /**
     * {@code {$in: [plain values]}} on a single-key index: a few keys, each looked up (the service's batched reads by
     * {@code _id} that also name the shard key, {@code {_id: {$in: ids}, account_tag: {$in: tags}}}, docs/SCALING.md).
     */
    private static boolean isPlainInList(Object value) {
        if (!(value instanceof Document document) || document.size() != 1 || !(document.get("$in") instanceof Collection<?> list)) {
            return false;
        }
        for (Object element : list) {
            if (!isPlainValue(element)) {
                return false;
            }
        }
        return true;
    }

    private Document keysOnly(Document query) {
        Document keysQuery = new Document();
        for (String key : keys()) {
            keysQuery.put(key, query.get(key));
        }
        return keysQuery;
    }

    @Override
    public boolean canHandle(Document query) {
        return inner.canHandle(query) || (inner.isUnique() && keysByEquality(query) && inner.canHandle(keysOnly(query)));
    }

    @Override
    public Iterable<P> getPositions(Document query) {
        return inner.canHandle(query) ? inner.getPositions(query) : inner.getPositions(keysOnly(query));
    }

    @Override
    public P getPosition(Document document) {
        return inner.getPosition(document);
    }

    @Override
    public void checkAdd(Document document, MongoCollection<P> collection) {
        inner.checkAdd(document, collection);
    }

    @Override
    public void add(Document document, P position, MongoCollection<P> collection) {
        inner.add(document, position, collection);
    }

    @Override
    public P remove(Document document) {
        return inner.remove(document);
    }

    @Override
    public long getCount() {
        return inner.getCount();
    }

    @Override
    public boolean isEmpty() {
        return inner.isEmpty();
    }

    @Override
    public long getDataSize() {
        return inner.getDataSize();
    }

    @Override
    public void checkUpdate(Document oldDocument, Document newDocument, MongoCollection<P> collection) {
        inner.checkUpdate(oldDocument, newDocument, collection);
    }

    @Override
    public void updateInPlace(Document oldDocument, Document newDocument, P position, MongoCollection<P> collection)
        throws KeyConstraintError {
        inner.updateInPlace(oldDocument, newDocument, position, collection);
    }

    @Override
    public void drop() {
        inner.drop();
    }

    @Override
    public boolean isUnique() {
        return inner.isUnique();
    }
}
