#include "bench/mock_model/request_log.hpp"

#include <algorithm>
#include <cctype>

namespace parley::mock_model {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

std::string mask_credential(const std::string& value) {
  auto space = value.find(' ');
  if (space != std::string::npos && lower(value.substr(0, space)) == "bearer")
    return value.substr(0, space + 1) + "<" + std::to_string(value.size() - space - 1) + " chars>";
  return "<" + std::to_string(value.size()) + " chars>";
}

bool is_credential_header(const std::string& name) {
  auto n = lower(name);
  return n == "authorization" || n == "proxy-authorization" || n == "api-key"
         || n == "x-api-key" || n == "openai-api-key";
}

void request_log::add(recorded_request request) {
  if (max_requests_ == 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  request.seq = next_seq_++;
  bytes_ += request.body.size();
  requests_.push_back(std::move(request));
  while (requests_.size() > max_requests_ || (bytes_ > max_bytes_ && requests_.size() > 1)) {
    bytes_ -= requests_.front().body.size();
    requests_.pop_front();
  }
}

nlohmann::json request_log::to_json(const recorded_request& r) {
  nlohmann::json headers = nlohmann::json::object();
  for (const auto& [name, value] : r.headers) {
    auto it = headers.find(name);
    if (it == headers.end())
      headers[name] = value;
    else  // a repeated header reads as one, comma-separated (RFC 9110)
      *it = it->get<std::string>() + ", " + value;
  }
  auto body = nlohmann::json::parse(r.body, nullptr, false);
  if (body.is_discarded()) body = r.body;
  return {{"seq", r.seq}, {"method", r.method}, {"path", r.path}, {"headers", headers},
          {"body", body}};
}

nlohmann::json request_log::all() const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto out = nlohmann::json::array();
  for (const auto& r : requests_) out.push_back(to_json(r));
  return out;
}

nlohmann::json request_log::last() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return requests_.empty() ? nlohmann::json(nullptr) : to_json(requests_.back());
}

void request_log::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  requests_.clear();
  bytes_ = 0;
}

}  // namespace parley::mock_model
