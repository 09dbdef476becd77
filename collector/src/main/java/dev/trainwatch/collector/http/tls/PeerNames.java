package dev.trainwatch.collector.http.tls;

import dev.trainwatch.collector.ingest.ApiError;
import java.security.cert.Certificate;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/**
 * With mutual TLS a batch may speak only for a host its client certificate names (subject CN or a DNS alternative
 * name, without case), so one node's certificate cannot report another. Pure.
 */
public final class PeerNames {

    /** RFC 5280. */
    private static final int DNS_NAME = 2;

    private PeerNames() {
    }

    /** The client certificate's names, lower case; empty without one. */
    public static Set<String> of(SSLSession session) {
        if (session == null) {
            return Set.of();
        }
        try {
            List<Certificate> chain = List.of(session.getPeerCertificates());
            return chain.isEmpty() || !(chain.get(0) instanceof X509Certificate leaf) ? Set.of() : names(leaf);
        } catch (SSLPeerUnverifiedException noClientCertificate) {
            return Set.of();
        }
    }

    static Set<String> names(X509Certificate certificate) {
        Set<String> names = new LinkedHashSet<>();
        try {
            for (Rdn rdn : new LdapName(certificate.getSubjectX500Principal().getName()).getRdns()) {
                if (rdn.getType().equalsIgnoreCase("CN")) {
                    names.add(String.valueOf(rdn.getValue()).toLowerCase(Locale.ROOT));
                }
            }
        } catch (InvalidNameException e) {
            // No usable subject: the alternative names may still name the node.
        }
        try {
            Collection<List<?>> alternatives = certificate.getSubjectAlternativeNames();
            if (alternatives != null) {
                for (List<?> alternative : alternatives) {
                    if (alternative.size() == 2 && Integer.valueOf(DNS_NAME).equals(alternative.get(0))) {
                        names.add(String.valueOf(alternative.get(1)).toLowerCase(Locale.ROOT));
                    }
                }
            }
        } catch (CertificateParsingException e) {
            // The subject's name is what there is.
        }
        return names;
    }

    /** Passes without a client certificate or with one naming {@code host}; else an {@link ApiError} 403. */
    public static void check(Set<String> names, String host) {
        if (!names.isEmpty() && host != null && !names.contains(host.toLowerCase(Locale.ROOT))) {
            throw new ApiError(ApiError.FORBIDDEN, "the client certificate names " + String.join(", ", names)
                    + ", not host '" + host + "': a node's certificate speaks only for that node (issue it for the"
                    + " name the agent's --host says)");
        }
    }
}
