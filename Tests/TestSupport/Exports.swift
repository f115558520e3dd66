@_exported import EventStoreTesting
