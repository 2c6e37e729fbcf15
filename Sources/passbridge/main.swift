import Bridge
