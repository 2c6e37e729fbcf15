/// `default-config.json` (the table in README.md next to this file), compiled in so an installed binary needs no data files.
/// `DefaultConfigTests` checks that both documents are equal.
enum DefaultConfig {
    static let text = #"""
        {
          "accessTokenTTLSeconds": 21600,
          "serviceProviders": [
            {
              "id": "REF",
              "name": "Reference Programmer",
              "domains": [{"name": "adobe.com", "mvpdInitiated": false}],
              "profileTTLSeconds": 86400,
              "codeTTLSeconds": 1800,
              "mediaTokenTTLSeconds": 420,
              "authorizationTTLSeconds": 86400,
              "mvpds": [
                {"id": "MockMVPD", "displayName": "Mock Cable", "logoUrl": "https://entitlement.auth.adobe.com/entitlement/noLogo.png"},
                {"id": "TempPass", "displayName": "Free Preview", "logoUrl": "https://entitlement.auth.adobe.com/entitlement/noLogo.png",
                 "tempPassSeconds": 180, "logout": false},
                {"id": "MockSSO", "displayName": "Mock SSO TV", "logoUrl": "https://entitlement.auth.adobe.com/entitlement/noLogo.png",
                 "platformMappingId": "MockSSO", "enablePlatformServices": true, "boardingStatus": "SUPPORTED",
                 "displayInPlatformPicker": true, "partnerSSO": ["Apple"]},
                {"id": "MockPicker", "displayName": "Mock Picker TV", "logoUrl": "https://entitlement.auth.adobe.com/entitlement/noLogo.png",
                 "platformMappingId": "MockPicker", "enablePlatformServices": true, "boardingStatus": "PICKER",
                 "displayInPlatformPicker": true}
              ]
            },
            {
              "id": "REF2",
              "name": "Reference Programmer 2",
              "domains": [{"name": "adobe.com", "mvpdInitiated": false}],
              "profileTTLSeconds": 86400,
              "codeTTLSeconds": 1800,
              "mediaTokenTTLSeconds": 420,
              "authorizationTTLSeconds": 86400,
              "mvpds": [
                {"id": "MockMVPD", "displayName": "Mock Cable", "logoUrl": "https://entitlement.auth.adobe.com/entitlement/noLogo.png"},
                {"id": "TempPass", "displayName": "Free Preview", "logoUrl": "https://entitlement.auth.adobe.com/entitlement/noLogo.png",
                 "tempPassSeconds": 180, "logout": false},
                {"id": "MockSSO", "displayName": "Mock SSO TV", "logoUrl": "https://entitlement.auth.adobe.com/entitlement/noLogo.png",
                 "platformMappingId": "MockSSO", "enablePlatformServices": true, "boardingStatus": "SUPPORTED",
                 "displayInPlatformPicker": true, "partnerSSO": ["Apple"]},
                {"id": "MockPicker", "displayName": "Mock Picker TV", "logoUrl": "https://entitlement.auth.adobe.com/entitlement/noLogo.png",
                 "platformMappingId": "MockPicker", "enablePlatformServices": true, "boardingStatus": "PICKER",
                 "displayInPlatformPicker": true},
                {"id": "PromoTempPass", "displayName": "Promo Preview", "logoUrl": "https://entitlement.auth.adobe.com/entitlement/noLogo.png",
                 "tempPassSeconds": 600, "promotional": true, "maxResources": 2, "logout": false},
                {"id": "DegradedAuthN", "displayName": "Degraded Cable (authenticate all)",
                 "logoUrl": "https://entitlement.auth.adobe.com/entitlement/noLogo.png", "degradation": "AuthNAll"},
                {"id": "DegradedAuthZ", "displayName": "Degraded Cable (authorize all)",
                 "logoUrl": "https://entitlement.auth.adobe.com/entitlement/noLogo.png", "degradation": "AuthZAll"}
              ]
            }
          ],
          "users": [
            {
              "username": "demo",
              "password": "demo",
              "mvpds": ["MockMVPD", "MockSSO", "MockPicker", "DegradedAuthZ"],
              "attributes": {
                "userID": {"value": "demo-user-0001", "state": "plain"},
                "householdID": {"value": "demo-household-0001", "state": "plain"},
                "zip": {"value": ["10001"], "state": "enc"}
              },
              "entitlements": {
                "ch1": {"permit": true},
                "ch2": {"permit": false, "details": "Your subscription does not include \"Channel 2\"."}
              }
            }
          ]
        }
        """#
}
