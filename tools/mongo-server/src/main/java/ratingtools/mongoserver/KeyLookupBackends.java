package ratingtools.mongoserver;

import java.util.List;

import org.h2.mvstore.MVStore;

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.KeyLookupIndex;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.backend.h2.H2Database;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.backend.memory.MemoryDatabase;

/**
 * The memory and H2 backends with every unique index (the {@code _id} index included) wrapped in a
 * {@link KeyLookupIndex}, so that a query naming a unique key plus other conditions reads one document instead of
 * scanning the collection, as MongoDB does. Memory collections also skip measuring their data size.
 */
final class KeyLookupBackends {

    private KeyLookupBackends() {
    }

    static MemoryBackend memory() {
        return new MemoryBackend() {
            @Override
            public MemoryDatabase openOrCreateDatabase(String databaseName) {
                return new MemoryDatabase(databaseName, getCursorRegistry()) {
                    @Override
                    protected MemoryCollection openOrCreateCollection(String collectionName, CollectionOptions options) {
                        return new UntrackedSizeCollection(this, collectionName, options, cursorRegistry);
                    }

                    @Override
                    protected Index<Integer> openOrCreateUniqueIndex(String collectionName, String indexName,
                                                                     List<IndexKey> keys, boolean sparse) {
                        return new KeyLookupIndex<>(super.openOrCreateUniqueIndex(collectionName, indexName, keys, sparse));
                    }
                };
            }
        };
    }

    /**
     * A memory collection that does not keep its data size (collStats' {@code size}, which nothing here reads):
     * the library measures it by encoding the document to BSON before and after every update, which on an
     * account holding its running calls was a third of the server's CPU per update (docs/BENCHMARKS.md).
     */
    private static final class UntrackedSizeCollection extends MemoryCollection {
        UntrackedSizeCollection(MemoryDatabase database, String name, CollectionOptions options, CursorRegistry cursors) {
            super(database, name, options, cursors);
        }

        @Override
        protected boolean tracksDataSize() {
            return false;
        }
    }

    static H2Backend h2(MVStore mvStore) {
        return new H2Backend(mvStore) {
            @Override
            protected MongoDatabase openOrCreateDatabase(String databaseName) {
                return new H2Database(databaseName, getMvStore(), getCursorRegistry()) {
                    @Override
                    protected Index<Object> openOrCreateUniqueIndex(String collectionName, String indexName,
                                                                    List<IndexKey> keys, boolean sparse) {
                        return new KeyLookupIndex<>(super.openOrCreateUniqueIndex(collectionName, indexName, keys, sparse));
                    }
                };
            }
        };
    }
}
