#pragma once
// The node links' TLS material, checked with OpenSSL before CAF sees it:
// CAF 0.17.6's openssl module loads the files at each connection and throws
// from its I/O thread when one does not load (the process would end), and it
// would ask a terminal for the passphrase of an encrypted key.

#include <string>

namespace parley::cluster {

/// Empty when `ca` loads, `cert` and `key` load (the key unencrypted) and
/// belong together, and `cert` is signed by `ca`; else what is wrong.
std::string check_tls_files(const std::string& ca, const std::string& cert,
                            const std::string& key);

}  // namespace parley::cluster
