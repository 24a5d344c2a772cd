// Package attemptspan is an attempt's CLIENT span: the attributes it
// starts with (Name, Attributes) and what it ends with, the attempt's
// Result (status, error.type, the time to first chunk on a success, usage,
// outcome and the failure model's verdict). The same Result tells the
// provider's guards how the attempt went (Verdict, Report) and the
// all-failed answer what status a failure stands for (ClientStatus).
// An End holds a span's end until its driver ends it: the gateway ends
// the last attempt's span once the client has its answer.
//
// It knows no route, request or HTTP state: package router hands it a
// candidate, a span and a Result.
package attemptspan
