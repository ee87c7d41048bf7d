#pragma once
// Fresh ids for responses, items and calls.

#include <string>
#include <string_view>

namespace parley::mock_model {

/// `<prefix>_mock_<nonce>_<n>`: n counts up per process, and the nonce is random per
/// process, so ids of two runs (a resumed thread may carry old ones) do not clash.
std::string fresh_id(std::string_view prefix);

}  // namespace parley::mock_model
