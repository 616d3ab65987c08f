"""The HTTP side: the API's routes and status table (`api`) and the local server (`serve`). Only the API
Lambda functions and `sourcerer serve` import it."""
