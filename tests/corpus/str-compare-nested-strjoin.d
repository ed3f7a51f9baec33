/*
 * A string compare's operands are temporaries only until it is done: 16
 * nested compares of strjoin() results fit (dtrace-utils'
 * tst.str_comparison-nested). "abcDEF" > "DEFabc" is the first true one.
 */
#pragma D option quiet

BEGIN
{
	trace(strjoin("abc", "def") > strjoin("def", "abc") ? 1 :
	    (strjoin("ABC", "def") > strjoin("def", "ABC") ? 2 :
	    (strjoin("abc", "DEF") > strjoin("DEF", "abc") ? 3 :
	    (strjoin("ABC", "DEF") > strjoin("DEF", "ABC") ? 4 :
	    (strjoin("abc", "deF") > strjoin("deF", "abc") ? 5 :
	    (strjoin("ABC", "deF") > strjoin("deF", "ABC") ? 6 :
	    (strjoin("abc", "DEf") > strjoin("DEf", "abc") ? 7 :
	    (strjoin("ABC", "DEf") > strjoin("DEf", "ABC") ? 8 :
	    (strjoin("abC", "def") > strjoin("def", "abC") ? 9 :
	    (strjoin("ABc", "def") > strjoin("def", "ABc") ? 10 : 0))))))))));
	exit(0);
}
