// The defaults of api_backend, and what a resource_request selects. See api_backend.hpp.

#include "app/apiserver/api_backend.hpp"

#include "app/apiserver/api_status.hpp"
#include "app/apiserver/resource_answer.hpp"

namespace kinformer::apiserver {

void api_backend::admit(const http_request& request, const access_request&,
                        std::shared_ptr<http_exchange> exchange, admitted next) {
  next(request, std::move(exchange));
}

void api_backend::write(const http_request&, const request_target&, const resource_path&,
                        std::shared_ptr<http_exchange> exchange) {
  exchange->respond(failure_response(method_not_allowed()));
}

bool resource_request::matches(const object& obj) const {
  if (!namespace_.empty() && obj.meta().namespace_ != namespace_)
    return false;
  return query.labels.matches(obj) && query.fields.matches(obj);
}

std::string resource_request::selection() const {
  return info.gvr.to_string() + "|" + namespace_ + "|" + query.labels.to_string() + "|" +
         query.fields.to_string();
}

} // namespace kinformer::apiserver
