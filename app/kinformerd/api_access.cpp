#include "app/kinformerd/api_access.hpp"

#include "protocol/http/api_client.hpp"

#include <boost/json.hpp>

#include <atomic>
#include <map>
#include <mutex>

namespace kinformer::service {

namespace json = boost::json;
using clock_type = std::chrono::steady_clock;

namespace {

struct user_info {
  std::string name, uid;
  std::vector<std::string> groups;
};

template <class T>
struct expiring {
  T value;
  clock_type::time_point until;
};

// A bounded map of answers that expire.
template <class T>
class answer_cache {
public:
  explicit answer_cache(std::size_t bound) : bound_(bound) {}
  std::optional<T> find(const std::string& key) {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key);
    if (it == entries_.end())
      return std::nullopt;
    if (it->second.until <= clock_type::now()) {
      entries_.erase(it);
      return std::nullopt;
    }
    return it->second.value;
  }
  void put(const std::string& key, T value, std::chrono::seconds ttl) {
    std::lock_guard lock(mutex_);
    if (entries_.size() >= bound_)
      entries_.clear(); // simple and bounded: the next requests review afresh
    entries_[key] = {std::move(value), clock_type::now() + ttl};
  }

private:
  std::size_t bound_;
  std::mutex mutex_;
  std::map<std::string, expiring<T>> entries_;
};

access_decision refused(int code, std::string reason, std::string message) {
  return {code, std::move(reason), std::move(message)};
}

std::string text_at(const json::value* v) {
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

} // namespace

struct api_access::state {
  state(std::shared_ptr<api_client> c, access_options o)
      : client(std::move(c)), options(o), users(o.max_cached), decisions(o.max_cached) {}

  std::shared_ptr<api_client> client;
  access_options options;
  answer_cache<std::optional<user_info>> users; // by token; nullopt: not authenticated
  answer_cache<bool> decisions;                 // by user, groups and request
  std::atomic<std::size_t> token_reviews{0}, access_reviews{0};
};

namespace {

using state_ptr = std::shared_ptr<api_access::state>;

void authorize(const state_ptr& st, const user_info& user, const access_request& request,
               std::function<void(access_decision)> done) {
  if (request.resource.empty() || !st->options.subject_access_review) {
    done({});
    return;
  }
  std::string key = user.name + "\n" + user.uid;
  for (const auto& g : user.groups)
    key += "\n" + g;
  key += "\n|" + request.verb + "|" + request.group + "|" + request.resource + "|" +
         request.namespace_ + "|" + request.name;
  auto denial = [user, request] {
    return refused(
        403, "Forbidden",
        request.resource + (request.group.empty() ? "" : "." + request.group) +
            " is forbidden: User \"" + user.name + "\" cannot " + request.verb + " resource \"" +
            request.resource + "\" in API group \"" + request.group + "\"" +
            (request.namespace_.empty() ? std::string(" at the cluster scope")
                                        : " in the namespace \"" + request.namespace_ + "\""));
  };
  if (auto cached = st->decisions.find(key)) {
    done(*cached ? access_decision{} : denial());
    return;
  }
  json::array groups;
  for (const auto& g : user.groups)
    groups.emplace_back(g);
  json::object attributes{{"verb", request.verb},
                          {"group", request.group},
                          {"version", request.version},
                          {"resource", request.resource}};
  if (!request.namespace_.empty())
    attributes["namespace"] = request.namespace_;
  if (!request.name.empty())
    attributes["name"] = request.name;
  write_request review;
  review.verb = api_verb::create;
  review.target = "/apis/authorization.k8s.io/v1/subjectaccessreviews";
  review.body = json::serialize(json::object{{"apiVersion", "authorization.k8s.io/v1"},
                                             {"kind", "SubjectAccessReview"},
                                             {"spec",
                                              {{"user", user.name},
                                               {"uid", user.uid},
                                               {"groups", groups},
                                               {"resourceAttributes", attributes}}}});
  ++st->access_reviews;
  st->client->write(review, [st, key, done, denial](result<http_response> answer) {
    if (!answer || answer->status_code / 100 != 2) {
      done(refused(503, "ServiceUnavailable", "the SubjectAccessReview failed"));
      return;
    }
    boost::system::error_code ec;
    auto value = json::parse(answer->body, ec);
    const auto* status =
        !ec && value.is_object() ? value.get_object().if_contains("status") : nullptr;
    const auto* allowed =
        status && status->is_object() ? status->get_object().if_contains("allowed") : nullptr;
    const bool yes = allowed && allowed->is_bool() && allowed->get_bool();
    st->decisions.put(key, yes, yes ? st->options.allowed_ttl : st->options.denied_ttl);
    done(yes ? access_decision{} : denial());
  });
}

// `done(user, reviewed)`: the token's user (nullopt: not authenticated); `reviewed` false when
// no review could be made.
void authenticate(const state_ptr& st, const std::string& token,
                  std::function<void(std::optional<user_info>, bool)> done) {
  if (auto cached = st->users.find(token)) {
    done(*cached, true);
    return;
  }
  write_request review;
  review.verb = api_verb::create;
  review.target = "/apis/authentication.k8s.io/v1/tokenreviews";
  review.body = json::serialize(json::object{{"apiVersion", "authentication.k8s.io/v1"},
                                             {"kind", "TokenReview"},
                                             {"spec", {{"token", token}}}});
  ++st->token_reviews;
  st->client->write(review, [st, token, done](result<http_response> answer) {
    if (!answer || answer->status_code / 100 != 2) {
      done(std::nullopt, false); // not cached: the next request reviews again
      return;
    }
    boost::system::error_code ec;
    auto value = json::parse(answer->body, ec);
    std::optional<user_info> user;
    const auto* status =
        !ec && value.is_object() ? value.get_object().if_contains("status") : nullptr;
    if (status && status->is_object()) {
      const auto& s = status->get_object();
      const auto* ok = s.if_contains("authenticated");
      const auto* u = s.if_contains("user");
      if (ok && ok->is_bool() && ok->get_bool() && u && u->is_object()) {
        user_info info;
        info.name = text_at(u->get_object().if_contains("username"));
        info.uid = text_at(u->get_object().if_contains("uid"));
        if (const auto* g = u->get_object().if_contains("groups"); g && g->is_array())
          for (const auto& group : g->get_array())
            info.groups.push_back(text_at(&group));
        user = std::move(info);
      }
    }
    st->users.put(token, user, user ? st->options.authenticated_ttl : st->options.denied_ttl);
    done(std::move(user), true);
  });
}

} // namespace

api_access::api_access(std::shared_ptr<api_client> client, access_options options)
    : state_(std::make_shared<state>(std::move(client), options)) {}

api_access::~api_access() = default;

void api_access::check(std::optional<std::string_view> authorization, const access_request& request,
                       std::function<void(access_decision)> done) {
  constexpr std::string_view bearer = "Bearer ";
  if (!authorization || !authorization->starts_with(bearer) ||
      authorization->size() == bearer.size()) {
    if (state_->options.anonymous && !authorization) {
      done({});
      return;
    }
    done(refused(401, "Unauthorized", "Unauthorized"));
    return;
  }
  std::string token(authorization->substr(bearer.size()));
  authenticate(state_, token,
               [st = state_, request, done](std::optional<user_info> user, bool reviewed) {
                 if (!reviewed) {
                   done(refused(503, "ServiceUnavailable", "the TokenReview failed"));
                   return;
                 }
                 if (!user) {
                   done(refused(401, "Unauthorized", "Unauthorized"));
                   return;
                 }
                 authorize(st, *user, request, done);
               });
}

std::size_t api_access::token_reviews() const {
  return state_->token_reviews;
}

std::size_t api_access::access_reviews() const {
  return state_->access_reviews;
}

} // namespace kinformer::service
