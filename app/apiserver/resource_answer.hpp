#pragma once
// The answers of the one API-server front end, as HTTP responses: Status failures, documents,
// and get and list answers in the shape their request asked for (objects, PartialObjectMetadata,
// Tables). A list is written as pieces: its envelope, then each stored object's own bytes, never
// copied.

#include "app/apiserver/api_backend.hpp"
#include "app/apiserver/http_server.hpp"

#include <string>

namespace kinformer::apiserver {

struct table_printer;

// A Status as the API server answers it: its code, its JSON, and Retry-After when it says so.
http_response failure_response(const status& s);

http_response json_response(std::string body, int code = 200);

// The printer columns of a Table of `request`'s kind; none for objects that are
// PartialObjectMetadata already, which have no spec or status to print (the default columns).
const table_printer* printer_of(const resource_request& request, bool metadata_only);

// One object in the shape asked for.
http_response object_response(const resource_request& request, const object_answer& answer,
                              int code = 200);

// A `<Kind>List`, PartialObjectMetadataList or Table of the page.
http_response list_response(const resource_request& request, list_answer answer);

} // namespace kinformer::apiserver
