package storetest
