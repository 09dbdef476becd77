package dev.trainwatch.estimator.catalog;

/** A catalog that cannot be used: one line naming the file and the entry, fit to show a user as is. */
public final class CatalogException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    public CatalogException(String message) {
        super(message);
    }
}
