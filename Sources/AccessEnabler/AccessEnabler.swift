// The entitlement engine (issue 4).
