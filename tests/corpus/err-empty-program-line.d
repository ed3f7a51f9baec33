/*
 * A script with nothing but comments: the error is at its end.
 */
