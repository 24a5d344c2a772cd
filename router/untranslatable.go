package router

import (
	"errors"
	"net/http"

	"github.com/firstbyte-dev/firstbyte/router/apierror"
	"github.com/firstbyte-dev/firstbyte/router/translate"
)

// refuseUntranslatable answers a request no candidate's wire format can
// carry (every one was skipped as untranslatable): 400, the client's to
// fix, with the field at fault in an OpenAI error's param and in the
// message.
func (g *Gateway) refuseUntranslatable(c *call) {
	var re *translate.RequestError
	msg, param := "the request cannot be served by any target of this model", ""
	if errors.As(c.route.untranslatable, &re) {
		msg, param = msg+": "+re.Message, re.Param
	}
	g.setGatewayHeaders(c.w.Header(), &c.route, c.target)
	c.answered(http.StatusBadRequest)
	apierror.WriteParam(c.w, c.ep.shape, http.StatusBadRequest, apierror.TypeInvalidRequest, "unsupported_parameter", param, msg, nil)
}
