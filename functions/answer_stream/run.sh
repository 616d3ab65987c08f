#!/bin/sh
# The streaming answer function: the Lambda Web Adapter (a layer) runs this once per execution environment and
# forwards each Function URL request to the server it starts, streaming the response back as it is written
# (AWS_LWA_INVOKE_MODE=response_stream). The server is `sourcerer serve`, the same WSGI app and routes as the
# other functions and the laptop, so `POST /v1/answer` with `Accept: text/event-stream` sends each event as made.
exec python -m sourcerer.cli serve --host 127.0.0.1 --port "${PORT:-8080}" --workers 1 --no-admin-key
